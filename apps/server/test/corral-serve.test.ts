import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { buildCorral, checkout } from "./built-corral.js";
import { tempDir, until } from "./helpers.js";

// The one command's own subcommands, built and run as users run them: `corral serve` starts the
// server, `corral runner login` prints a login, `corral service install` writes a systemd unit.

let outdir: string;
let cli: string;
const home = tempDir("corral-serve-home-");

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A user's shell: a HOME of its own and nothing of Corral's but what a test adds. */
function shellEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? "", HOME: home, USER: "corral-test", ...extra };
}

function corral(args: string[], env: NodeJS.ProcessEnv = shellEnv()): Promise<Run> {
  const child = spawn(process.execPath, [cli, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  const out = { stdout: "", stderr: "" };
  child.stdout.on("data", (d: Buffer) => (out.stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (out.stderr += d.toString()));
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, ...out })));
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  outdir = await buildCorral();
  cli = path.join(outdir, "corral.js");
}, 60_000);

afterAll(() => {
  rmSync(outdir, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

describe("corral serve", () => {
  test("starts the server with the settings of the environment, says where, and stops on SIGTERM", async () => {
    const port = await freePort();
    const data = path.join(home, "serve-data");
    const child = spawn(process.execPath, [cli, "serve"], {
      env: shellEnv({ CORRAL_PORT: String(port), CORRAL_DATA_DIR: data }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
    try {
      await until(() => (stdout.includes("Corral is running.") ? true : undefined), 30_000, `corral serve to start (stderr: ${stderr})`);
      expect(stdout).toContain(`http://127.0.0.1:${port}`);
      const res = await fetch(`http://127.0.0.1:${port}/api/health`);
      expect(res.status).toBe(200);
      // Its token made in the data dir, as under `pnpm start`.
      expect(existsSync(path.join(data, "token"))).toBe(true);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
  }, 60_000);

  test("takes no arguments", async () => {
    const run = await corral(["serve", "now"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('unexpected argument "now"');
  });
});

test("corral --version prints the server package's version", async () => {
  const { version } = JSON.parse(readFileSync(path.join(checkout, "apps/server/package.json"), "utf8")) as { version: string };
  const run = await corral(["--version"]);
  expect(run.code).toBe(0);
  expect(run.stdout).toBe(`corral ${version}\n`);
});

describe("corral runner", () => {
  test("login prints the statements that make a runner's own login", async () => {
    const run = await corral(["runner", "login", "gpu-box", "gpu,linux"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/CREATE ROLE/i);
    expect(run.stdout).toContain("gpu-box");
  });

  test("a login without its labels, or an unknown word, is a usage error naming the form", async () => {
    const missing = await corral(["runner", "login", "gpu-box"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("login takes a name and labels");
    const unknown = await corral(["runner", "start"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown argument "start"');
    expect(unknown.stderr).toContain("corral runner [login <name> <labels>]");
  });

  test("without a registry in PostgreSQL it says what it needs and exits 1", async () => {
    const run = await corral(["runner"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("CORRAL_DATABASE_URL");
  });
});

describe("corral service install", () => {
  const config = path.join(home, "config");
  const unitFile = path.join(config, "systemd/user/corral.service");
  const env = (extra: Record<string, string> = {}) =>
    shellEnv({ XDG_CONFIG_HOME: config, CORRAL_PORT: "4411", CORRAL_URL: "http://elsewhere:1", ...extra });

  test("--print shows the unit and writes nothing: this Node and this corral, in this directory, with the shell's settings", async () => {
    const run = await corral(["service", "install", "--print"], env());
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`ExecStart="${process.execPath}" "${cli}" serve`);
    expect(run.stdout).toContain('Environment="CORRAL_PORT=4411"');
    expect(run.stdout).toContain(`Environment="PATH=${process.env.PATH}"`);
    expect(run.stdout).toContain(`WorkingDirectory=${process.cwd()}\n`);
    // Where `corral` finds a server is not the server's setting.
    expect(run.stdout).not.toContain("elsewhere");
    expect(run.stdout).toContain("KillMode=process");
    expect(existsSync(unitFile)).toBe(false);
  });

  test("writes the unit, says how to start it, refuses to replace one that differs unless forced", async () => {
    const first = await corral(["service", "install"], env());
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`Wrote ${unitFile}`);
    expect(first.stdout).toContain("systemctl --user daemon-reload && systemctl --user enable --now corral");
    expect(first.stdout).toContain(`The token: the file ${path.join(home, ".local/share/corral/token")}, as under corral serve.`);
    const written = readFileSync(unitFile, "utf8");
    expect(statSync(unitFile).mode & 0o777).toBe(0o600);

    // The same unit again: nothing to refuse.
    expect((await corral(["service", "install"], env())).code).toBe(0);

    const changed = await corral(["service", "install"], env({ CORRAL_PORT: "4412" }));
    expect(changed.code).toBe(2);
    expect(changed.stderr).toContain("differs");
    expect(changed.stderr).toContain("--force");
    expect(readFileSync(unitFile, "utf8")).toBe(written);

    const forced = await corral(["service", "install", "--force"], env({ CORRAL_PORT: "4412" }));
    expect(forced.code).toBe(0);
    expect(readFileSync(unitFile, "utf8")).toContain('Environment="CORRAL_PORT=4412"');
  });

  test("systemd reads the unit it writes without a complaint", async (ctx) => {
    const verify = spawnSync("systemd-analyze", ["--version"]);
    if (verify.error) {
      if (process.env.CORRAL_REQUIRE_TOOLS === "1") throw new Error("systemd-analyze is missing: install systemd");
      ctx.skip("systemd-analyze is not installed: the unit is checked where it is");
    }
    // A setting with every character a unit treats specially.
    const odd = path.join(home, "odd");
    const run = await corral(["service", "install", "--force"], env({ CORRAL_DATA_DIR: `${odd}/100% "$HOME" \\ data` }));
    expect(run.code).toBe(0);
    // A user manager's runtime dir of its own: a test machine may have no login session.
    const runtime = path.join(home, "runtime");
    mkdirSync(runtime, { recursive: true, mode: 0o700 });
    const checked = spawnSync("systemd-analyze", ["verify", "--user", unitFile], {
      encoding: "utf8",
      env: { ...process.env, XDG_CONFIG_HOME: config, XDG_RUNTIME_DIR: runtime },
    });
    expect(`${checked.stdout}${checked.stderr}`).toBe("");
    expect(checked.status).toBe(0);
  });

  test("settings the server would refuse are refused here, naming the setting; an unknown action names the one there is", async () => {
    const bad = await corral(["service", "install"], env({ CORRAL_PORT: "eighty" }));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("CORRAL_PORT");
    expect(bad.stderr).toContain("the service would start with these settings");
    // Listening beyond loopback needs CORRAL_TOKEN, as for corral serve: without it the unit could never start.
    const open = await corral(["service", "install", "--print"], env({ CORRAL_HOST: "0.0.0.0" }));
    expect(open.code).toBe(2);
    expect(open.stderr).toContain("without CORRAL_TOKEN");
    const withToken = await corral(["service", "install", "--print"], env({ CORRAL_HOST: "0.0.0.0", CORRAL_TOKEN: "a-secret-token-value" }));
    expect(withToken.code).toBe(0);
    expect(withToken.stdout).toContain('Environment="CORRAL_TOKEN=a-secret-token-value"');
    const broken = await corral(["service", "install"], env({ PATH: `${process.env.PATH}\nExecStartPre=/bin/sh -c evil` }));
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain("line break");
    const unknown = await corral(["service", "start"], env());
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("the one action is install");
  });
});
