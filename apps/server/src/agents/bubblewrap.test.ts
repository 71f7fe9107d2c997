import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { expect, test } from "vitest";
import { tempDir } from "../../test/helpers.js";
import { bwrapArgs } from "./bubblewrap.js";
import { stateDirsOf } from "./sandbox.js";

test("secrets and Corral's data are hidden after every bind, so neither a workdir of ~ nor a CLI's state dir uncovers them", () => {
  const home = tempDir("corral-bwrap-args-");
  try {
    const dataDir = path.join(home, ".local", "share", "corral");
    mkdirSync(path.join(home, ".ssh"));
    mkdirSync(dataDir, { recursive: true });
    mkdirSync(path.join(home, ".local", "share", "opencode"), { recursive: true });
    const args = bwrapArgs(home, home, dataDir, stateDirsOf({ kind: "opencode", command: null }));
    // Mounts apply in order: a later bind of a parent would cover an earlier tmpfs over its child.
    const lastBind = args.lastIndexOf("--bind");
    expect(args[lastBind + 1]).toBe(path.join(home, ".local", "share", "opencode"));
    expect(args.includes("--bind") && args[args.indexOf("--bind") + 1]).toBe(home);
    for (const hidden of [path.join(home, ".ssh"), dataDir]) {
      const tmpfs = args.findIndex((arg, i) => arg === "--tmpfs" && args[i + 1] === hidden);
      expect(tmpfs, hidden).toBeGreaterThan(lastBind);
    }
    expect(args.slice(-2)).toEqual(["--chdir", home]);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
