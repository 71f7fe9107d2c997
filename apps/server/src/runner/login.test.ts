import { describe, expect, it } from "vitest";
import { ConfigError } from "../config.js";
import { runnerLogin, runnerLoginStatements } from "./login.js";

describe("corral runner login", () => {
  it("makes a login named after the runner, allowed its labels, and quotes what it writes", () => {
    const login = runnerLogin("Box-1 o'clock", "gpu, codex,gpu", "pa'ss");
    expect(login).toEqual({ role: "corral_runner_box_1_o_clock", name: "Box-1 o'clock", labels: ["gpu", "codex"], password: "pa'ss" });
    const sql = runnerLoginStatements(login);
    expect(sql).toContain("ALTER ROLE corral_runner_box_1_o_clock LOGIN PASSWORD 'pa''ss';");
    expect(sql).toContain("GRANT corral_runners TO corral_runner_box_1_o_clock;");
    expect(sql).toContain("VALUES ('corral_runner_box_1_o_clock', 'Box-1 o''clock', ARRAY['gpu', 'codex']::text[])");
    expect(runnerLogin("x".repeat(100), "gpu").role).toHaveLength(63);
  });

  it("refuses what no runner could use, saying what to give", () => {
    expect(() => runnerLogin(undefined, undefined)).toThrow(/give the runner's name and its labels: corral runner login box-1 gpu,codex/);
    expect(() => runnerLogin("local", "gpu")).toThrow(/the server's own runner/);
    expect(() => runnerLogin("box", "Big Disk")).toThrow(ConfigError);
    expect(() => runnerLogin("box", " , ")).toThrow(/give the runner's name/);
  });
});
