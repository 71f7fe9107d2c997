// Corral as one npm package (`pnpm package`), tried as a new user would on each Node the suite has
// (the machine's, and Node 24): `npm install -g` of the packed tarball into a temp prefix with a
// fresh HOME, `corral serve`, the panel at the printed address, `claude mcp add` as the Connect page
// writes it, and a job that Claude Code (a scripted model) runs through Corral; `corral run` from the
// same install. Nothing of the checkout is on the way: the installed files are all the server has.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packPackage } from "../pack.js";
import { startFakeAnthropic } from "../test/fixtures/fake-llm/anthropic.js";
import type { FakeServer, RecordedRequest, Turn } from "../test/fixtures/fake-llm/script.js";
import { fakeBinDir, until } from "../test/helpers.js";
import { lastToolResults, toolResultsIn } from "./lib/anthropic-transcript.js";
import { type ClientRun, claudeEnv, clientBuild, describeRun, type NodeBuild, prepareWorkerHome, runClient, suiteNodes } from "./lib/clients.js";

const checkout = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const globalNpmrc = execFileSync("npm", ["config", "get", "globalconfig"], { encoding: "utf8" }).trim();
const tmp = mkdtempSync(path.join(os.tmpdir(), "corral-package-test-"));
let tarball: string;

/** Each Node's install, started together once the package is packed: each compiles better-sqlite3 (about a minute). */
const installs = new Map<string, Promise<ClientRun>>();

beforeAll(async () => {
  tarball = await packPackage(tmp);
  for (const node of suiteNodes()) installs.set(node.version, installOn(node));
}, 120_000);

const homeOf = (node: NodeBuild) => path.join(tmp, `home-${node.version}`);
const prefixOf = (node: NodeBuild) => path.join(tmp, `prefix-${node.version}`);
/** The fake CLIs (a `gemini` among them) as a user's installed agents; this Node first. */
const userPathOf = (node: NodeBuild) =>
  [path.join(prefixOf(node), "bin"), node.binDir, fakeBinDir, "/usr/local/bin", "/usr/bin", "/bin"].join(path.delimiter);

/** `npm install -g` of the package into a prefix of its own, with a fresh HOME, on `node`. */
function installOn(node: NodeBuild): Promise<ClientRun> {
  const home = homeOf(node);
  mkdirSync(home, { recursive: true });
  prepareWorkerHome(home);
  // npm 11 runs a dependency's install script only when allowed; this machine has no route to
  // nodejs.org for Node's headers, which node-gyp would download, so npm is told where they are.
  // The machine's own npm settings (its registry's certificates) come along, as for any install here:
  // with --prefix, npm would look for them under the prefix.
  const env: Record<string, string> = { PATH: userPathOf(node), HOME: home, LANG: "C.UTF-8", npm_config_globalconfig: globalNpmrc };
  if (process.env.NODE_EXTRA_CA_CERTS) env.NODE_EXTRA_CA_CERTS = process.env.NODE_EXTRA_CA_CERTS;
  if (node.nodedir) env.npm_config_nodedir = node.nodedir;
  return runClient("npm", ["install", "-g", "--prefix", prefixOf(node), "--allow-scripts=better-sqlite3", "--no-fund", "--no-audit", tarball], {
    cwd: home,
    env,
    timeoutMs: 300_000,
  });
}

afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

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

it("holds the built server, the panel, the spawner and the migrations, and no sources", async () => {
  const listed = await runClient("tar", ["tzf", tarball], { cwd: tmp, env: { PATH: process.env.PATH ?? "" } });
  const files = listed.stdout.split("\n").filter(Boolean);
  for (const file of [
    "package/package.json",
    "package/apps/server/package.json",
    "package/apps/server/dist/corral.js",
    "package/apps/server/dist/server.js",
    "package/apps/server/dist/acp-client.js",
    "package/apps/server/src/jobs/spawner.mjs",
    "package/apps/server/src/runner/runner-role.sql",
    "package/apps/web/dist/index.html",
    "package/drizzle/meta/_journal.json",
    "package/drizzle-pg/meta/_journal.json",
    "package/README.md",
  ]) {
    expect(files).toContain(file);
  }
  expect(files.filter((f) => /\.tsx?$/.test(f))).toEqual([]);
  // Only what git tracks, and the two builds (no source maps: they would carry the packer's paths).
  const tracked = new Set(execFileSync("git", ["ls-files"], { cwd: checkout, encoding: "utf8" }).split("\n"));
  const stray = files
    .map((f) => f.replace(/^package\//, ""))
    .filter(
      (f) =>
        !tracked.has(f) &&
        !/^apps\/(server|web)\/dist\/[^.][^/]*(\/[^./][^/]*)*$/.test(f) &&
        !["package.json", "apps/server/package.json"].includes(f),
    );
  expect(stray).toEqual([]);
  expect(files.filter((f) => f.endsWith(".map"))).toEqual([]);
  const manifest = await runClient("tar", ["xzfO", tarball, "package/package.json"], { cwd: tmp, env: { PATH: process.env.PATH ?? "" } });
  // Ready to publish: a name, a version, one bin, the addon its one dependency.
  expect(JSON.parse(manifest.stdout)).toMatchObject({
    name: "corral",
    version: expect.stringMatching(/^\d+\.\d+\.\d+$/),
    bin: { corral: "apps/server/dist/corral.js" },
    dependencies: { "better-sqlite3": expect.any(String) },
  });
  expect(JSON.parse(manifest.stdout).private).toBeUndefined();
});

for (const node of suiteNodes()) {
  describe(`installed with npm on Node ${node.version}`, () => {
    const home = homeOf(node);
    const bin = path.join(prefixOf(node), "bin");
    const data = path.join(home, ".local/share/corral");
    const userPath = userPathOf(node);
    const shell = (extra: Record<string, string> = {}) => ({ PATH: userPath, HOME: home, LANG: "C.UTF-8", ...extra });
    let server: ChildProcess | undefined;
    let url = "";
    let serverOut = "";

    beforeAll(async () => {
      const installed = await (installs.get(node.version) ?? installOn(node));
      expect(installed.code, describeRun(installed)).toBe(0);
      expect(existsSync(path.join(bin, "corral"))).toBe(true);
    }, 320_000);

    afterAll(() => {
      server?.kill("SIGTERM");
    });

    it("corral --help names serve, runner and service beside the job commands", async () => {
      const run = await runClient(path.join(bin, "corral"), ["--help"], { cwd: home, env: shell() });
      expect(run.code, describeRun(run)).toBe(0);
      for (const command of ["serve", "runner", "service", "status", "run", "logs"]) expect(run.stdout).toMatch(new RegExp(`^  ${command} `, "m"));
    });

    it("corral serve starts on this Node, makes its token and serves the panel at the printed address", async () => {
      const port = await freePort();
      server = spawn(path.join(bin, "corral"), ["serve"], {
        cwd: home,
        env: shell({ CORRAL_PORT: String(port) }),
        stdio: ["ignore", "pipe", "pipe"],
      });
      server.stdout?.on("data", (d: Buffer) => (serverOut += d.toString()));
      server.stderr?.on("data", (d: Buffer) => (serverOut += d.toString()));
      const opened = await until(() => /Open: +(http:\/\/\S+)\/\?token=/.exec(serverOut)?.[1], 60_000, `corral serve to start:\n${serverOut}`);
      url = opened;
      expect(url).toBe(`http://127.0.0.1:${port}`);
      expect(serverOut).toContain(`Data:  ${data}`);
      if (node.version.startsWith("v20.")) expect(serverOut).toContain("past its end of life");
      else expect(serverOut).not.toContain("past its end of life");
      const page = await fetch(`${url}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("<title>Corral</title>");
    });

    it("Claude Code, added as the Connect page says, runs a job through it; corral run runs one too", async () => {
      expect(url, "the server started").not.toBe("");
      const token = readFileSync(path.join(data, "token"), "utf8").trim();
      const connect = (await (await fetch(`${url}/api/connect`, { headers: { authorization: `Bearer ${token}` } })).json()) as { mcpUrl: string };
      const claudeHome = path.join(home, "claude-home");
      const project = path.join(home, "project");
      mkdirSync(claudeHome, { recursive: true });
      mkdirSync(project, { recursive: true });
      const claude = clientBuild("claude", "newest");
      const claudeRun = (args: string[], apiUrl: string | null) =>
        runClient(claude.bin, args, { cwd: project, env: { ...claudeEnv(claudeHome, apiUrl), PATH: claude.path }, timeoutMs: 120_000 });
      const added = await claudeRun(
        ["mcp", "add", "--transport", "http", "corral", connect.mcpUrl, "--header", `Authorization: Bearer ${token}`],
        null,
      );
      expect(added.code, describeRun(added)).toBe(0);

      const workdir = path.join(home, "jobs", "from-claude");
      let jobId = "";
      const script: Turn[] = [
        {
          kind: "tool",
          name: "mcp__corral__gemini_run_async",
          args: { prompt: "write answer.txt forty-two", workdir },
          usage: { input: 900, output: 30 },
        },
        { kind: "tool", name: "mcp__corral__corral_wait", args: {}, usage: { input: 950, output: 20 } },
        { kind: "text", text: "Done.", usage: { input: 1000, output: 4 } },
      ];
      const onRequest = (request: RecordedRequest) => {
        const first = toolResultsIn(request.body)[0];
        if (!first || jobId) return;
        jobId = first.text.trim();
        script[1] = { ...script[1]!, args: { job_ids: [jobId], timeout_s: 60 } } as Turn;
      };
      const fake: FakeServer = await startFakeAnthropic(script, { onRequest });
      try {
        const run = await claudeRun(
          [
            "-p",
            "Ask gemini to write answer.txt and wait for it.",
            "--model",
            "claude-sonnet-4-5",
            "--output-format",
            "json",
            "--permission-mode",
            "acceptEdits",
            "--allowedTools",
            "mcp__corral",
          ],
          fake.url,
        );
        expect(run.code, describeRun(run)).toBe(0);
        const seen = lastToolResults(fake.requests);
        expect(
          seen.map((r) => r.isError),
          JSON.stringify(seen, null, 1),
        ).toEqual([false, false]);
        expect(seen[1]?.text).toMatch(/^all 1 ended/);
      } finally {
        await fake.close();
      }
      const job = (await (await fetch(`${url}/api/jobs/${jobId}`, { headers: { authorization: `Bearer ${token}` } })).json()) as { status: string };
      expect(job.status, serverOut).toBe("succeeded");
      expect(readFileSync(path.join(workdir, "answer.txt"), "utf8")).toBe("forty-two");

      const fromTerminal = await runClient(
        path.join(bin, "corral"),
        ["run", "gemini", "--workdir", path.join(home, "jobs", "from-corral"), "say listo"],
        {
          cwd: home,
          env: shell({ CORRAL_URL: url }),
        },
      );
      expect(fromTerminal.code, describeRun(fromTerminal)).toBe(0);
      expect(fromTerminal.stdout).toContain("listo");
    }, 180_000);

    it("without better-sqlite3's addon (npm told not to build it) the server says how to install it", async () => {
      server?.kill("SIGTERM");
      rmSync(path.join(prefixOf(node), "lib/node_modules/corral/node_modules/better-sqlite3/build"), { recursive: true, force: true });
      const run = await runClient(path.join(bin, "corral"), ["serve"], {
        cwd: home,
        env: shell({ CORRAL_PORT: String(await freePort()) }),
        timeoutMs: 60_000,
      });
      expect(run.code, describeRun(run)).toBe(1);
      expect(run.stderr).toContain("npm install -g --allow-scripts=better-sqlite3 with the same package or tarball");
      expect(run.stderr).not.toContain("Could not locate the bindings file");
    });
  });
}
