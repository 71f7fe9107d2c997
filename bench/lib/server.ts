// Runs the built server (`node apps/server/dist/server.js`, what `pnpm start` runs) as a child
// process in a temp dir, so its memory can be read from /proc and its start-up timed from spawn.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const builtServer = path.join(repo, "apps/server/dist/server.js");
const BENCH_TOKEN = "bench-token-0123456789abcdef";

export { sleep };

/**
 * Where each benchmark makes its fresh directory (the server's data dir and the workdirs):
 * `BENCH_DIR`, else `$XDG_CACHE_HOME/corral-bench` (`~/.cache/corral-bench`), beside Corral's own
 * default data dir (`~/.local/share/corral`) rather than in the system temp dir, where other
 * programs' churn made creating a file several times slower on the machine the figures of
 * docs/benchmarks.md come from.
 */
export function freshBenchDir(prefix: string): string {
  const parent = process.env.BENCH_DIR ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache"), "corral-bench");
  mkdirSync(parent, { recursive: true });
  return realpathSync(mkdtempSync(path.join(parent, prefix)));
}

export interface RunningServer {
  url: string;
  pid: number;
  root: string;
  token: string;
  /** Milliseconds from spawn to the first 200 from GET /api/health. */
  startMs: number;
  stop(): Promise<void>;
}

/** Kernel memory counters of a live process, in MiB: VmRSS (now) and VmHWM (peak). */
export function memoryOf(pid: number): { rssMiB: number; peakMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
  return { rssMiB: kib("VmRSS") / 1024, peakMiB: kib("VmHWM") / 1024 };
}

/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on Linux). */
const TICK_MS = 10;

/**
 * CPU a process used, in ms, from /proc/<pid>/stat: its own (user + system) and that of its
 * children it has reaped (their workers included). Unlike a wall-clock figure, it does not
 * depend on what else the machine runs.
 */
export function cpuOf(pid: number | "self"): { ownMs: number; childrenMs: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  const ticks = (i: number) => Number(fields[i] ?? NaN);
  return { ownMs: (ticks(11) + ticks(12)) * TICK_MS, childrenMs: (ticks(13) + ticks(14)) * TICK_MS };
}

/**
 * cpuOf for a server and its live children: its workers are started, and reaped, by its spawner
 * (apps/server/src/jobs/spawner.mjs), so their CPU is the spawner's children's until it exits.
 */
export function treeCpuOf(pid: number): { ownMs: number; childrenMs: number } {
  const children = readdirSync(`/proc/${pid}/task`).flatMap((task) =>
    readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim().split(" ").filter(Boolean).map(Number),
  );
  return children.reduce((sum, child) => {
    const cpu = cpuOf(child);
    return { ownMs: sum.ownMs + cpu.ownMs, childrenMs: sum.childrenMs + cpu.childrenMs };
  }, cpuOf(pid));
}

/** Polls `url` until it answers 200; returns when it does. */
export async function waitHealthy(url: string, child: ChildProcess, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`process exited with ${child.exitCode} before answering`);
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs} ms`);
    await sleep(5);
  }
}

/** A free loopback port: the server prints its URL only after it is ready, so the port is chosen here. */
export async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const address = s.address();
      const port = typeof address === "object" && address ? address.port : 0;
      s.close(() => resolve(port));
    });
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
    setTimeout(() => child.kill("SIGKILL"), 5000).unref();
  });
}

export async function startCorral(env: Record<string, string> = {}): Promise<RunningServer> {
  const serverEntry = process.env.BENCH_SERVER ?? builtServer;
  if (!existsSync(serverEntry)) throw new Error(`${serverEntry} is missing: run \`pnpm build\` first`);
  const root = freshBenchDir("corral-bench-");
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [...(process.env.BENCH_NODE_ARGS?.split(" ").filter(Boolean) ?? []), serverEntry], {
    cwd: root,
    stdio: ["ignore", "ignore", "pipe"],
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: root,
      CORRAL_PORT: String(port),
      CORRAL_DATA_DIR: path.join(root, "data"),
      CORRAL_WORKDIR_ROOTS: root,
      CORRAL_TOKEN: BENCH_TOKEN,
      CORRAL_LOG_LEVEL: "warn",
      ...env,
    },
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (d: string) => (stderr = (stderr + d).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitHealthy(`${url}/api/health`, child);
  } catch (err) {
    await stopChild(child);
    rmSync(root, { recursive: true, force: true });
    throw new Error(`Corral did not start: ${(err as Error).message}\n${stderr}`);
  }
  const startMs = performance.now() - started;
  return {
    url,
    pid: child.pid!,
    root,
    token: BENCH_TOKEN,
    startMs,
    async stop() {
      await stopChild(child);
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** The floor for a Node HTTP server: a bare `http.createServer` answering 200, started the same way. */
export async function startBareNode(): Promise<{ url: string; pid: number; startMs: number; stop(): Promise<void> }> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, ["-e", `require("node:http").createServer((q, s) => s.end('{"ok":true}')).listen(${port}, "127.0.0.1")`], {
    stdio: "ignore",
  });
  const url = `http://127.0.0.1:${port}`;
  await waitHealthy(url, child);
  return { url, pid: child.pid!, startMs: performance.now() - started, stop: () => stopChild(child) };
}

/**
 * Adds a `command` agent that runs `/bin/true`: a worker that does nothing, to time dispatch alone.
 * With `runnerLabel` its jobs are run by runners with that label (the registry must be in PostgreSQL).
 */
export async function addTrivialAgent(server: RunningServer, name: string, maxConcurrent = 4, runnerLabel?: string): Promise<string> {
  const bin = ["/usr/bin/true", "/bin/true"].find((p) => existsSync(p));
  if (!bin) throw new Error("no /usr/bin/true or /bin/true");
  const res = await fetch(`${server.url}/api/agents`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
    body: JSON.stringify({ name, kind: "command", command: bin, args: [], workdir: path.join(server.root, "work"), maxConcurrent, runnerLabel }),
  });
  if (res.status !== 201) throw new Error(`adding agent ${name}: ${res.status} ${await res.text()}`);
  return bin;
}

/** Spawns `command` and resolves when it exits: the physical cost of running a worker. */
export function spawnAndWait(command: string, cwd: string, args: string[] = [], env?: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: "ignore", ...(env && { env }) });
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}`))));
  });
}

/** bench/fixtures/gemini: Gemini CLI's flags and `-o stream-json` events in /bin/sh builtins. */
export const FAKE_GEMINI = path.join(repo, "bench/fixtures/gemini");

/** What a bench job of the fake gemini is asked: one file written (a tool call), then its answer. */
export const GEMINI_PROMPT = "write answer.txt hello from the bench";

/**
 * Adds an agent of the built-in kind `gemini` whose binary is bench/fixtures/gemini, as a user
 * points an agent at a CLI that is not on PATH (its "Binary override"): Corral runs it as it runs
 * Gemini CLI (its flags, the `-o stream-json` parser, the session it reports, the files it writes).
 * Returns how to spawn the same worker directly: the command, the arguments Corral passes
 * (agents/kinds/gemini.ts) and the environment the worker gets (the server's HOME and PATH).
 */
export async function addGeminiAgent(
  server: RunningServer,
  name: string,
  maxConcurrent = 4,
): Promise<{ command: string; args: string[]; env: Record<string, string> }> {
  const res = await fetch(`${server.url}/api/agents`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
    body: JSON.stringify({ name, kind: "gemini", command: FAKE_GEMINI, workdir: path.join(server.root, "work"), maxConcurrent }),
  });
  if (res.status !== 201) throw new Error(`adding agent ${name}: ${res.status} ${await res.text()}`);
  return {
    command: FAKE_GEMINI,
    args: ["-y", "-o", "stream-json", `--prompt=${GEMINI_PROMPT}`],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: server.root },
  };
}
