import os from "node:os";
import path from "node:path";
import { AgentNameSchema } from "@corral/shared";
import { z } from "zod";
import { openFilesLimit } from "./lib/fd-limit.js";
import { isInside } from "./lib/paths.js";

/** How long a Corral process waits for a lock in PostgreSQL by default (CORRAL_REGISTRY_LOCK_TIMEOUT_MS; db/pg/lock-wait.ts says why). */
export const DEFAULT_LOCK_TIMEOUT_MS = 10_000;

/** Replaced by the agent's name in `CORRAL_DEFAULT_WORKDIR`. */
const AGENT_PLACEHOLDER = "{agent}";
/** The folder under the first allowed root that holds each agent's default workdir. */
const DEFAULT_WORKDIR_FOLDER = "corral-work";

const portSchema = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().min(1);
const listOf = (separator: string) =>
  z.string().transform((s) =>
    s
      .split(separator)
      .map((p) => p.trim())
      .filter(Boolean),
  );

/**
 * What docs/settings.md gives as a setting's default when the schema has none to show: one worked
 * out at start (a path under the home dir, a share of `ulimit -n`) or the absence of the setting.
 */
const shownDefault = (text: string) => ({ defaultText: text });

/**
 * Every setting of the server, with its environment variable. Each `.describe()` is what
 * docs/settings.md says of it (`pnpm docs:settings` writes the table; a test keeps them in step).
 */
export const EnvSchema = z.object({
  CORRAL_HOST: z
    .string()
    .min(1)
    .default("127.0.0.1")
    .describe(
      "Address to listen on. Anything but a loopback address (`127.x.x.x`, `::1`, `localhost`) needs `CORRAL_TOKEN`, or Corral refuses to start.",
    ),
  CORRAL_PORT: portSchema.default(7433).describe("Port for the panel, REST, WebSocket and MCP."),
  CORRAL_DATA_DIR: z
    .string()
    .min(1)
    .optional()
    .describe(
      "SQLite registry, job output, token; owner-only (`0700`, files `0600`). A runner's default is `~/.local/share/corral-runner`, so a runner beside a server never shares its job logs.",
    )
    .meta(shownDefault("`$XDG_DATA_HOME/corral`, else `~/.local/share/corral`")),
  CORRAL_DATABASE_URL: z
    .string()
    .refine(
      (url) => /^postgres(ql)?:\/\/[^\s]+$/.test(url) && URL.canParse(url),
      "must be a PostgreSQL URL: postgres://user:password@host:5432/database",
    )
    .optional()
    .describe(
      "`postgres://user:password@host:5432/database`: keep the registry in PostgreSQL instead ([A registry in PostgreSQL](runners.md#a-registry-in-postgresql)); required by `corral runner`. Job output and the token stay in the data dir.",
    )
    .meta(shownDefault("none: the registry is SQLite in the data dir")),
  CORRAL_TOKEN: z
    .string()
    .min(16, "use at least 16 characters")
    .optional()
    .describe("Token for every door (at least 16 characters). Not passed on to workers.")
    .meta(shownDefault("generated once, kept in `<data dir>/token` (mode 0600)")),
  CORRAL_CONFIG: z
    .string()
    .min(1)
    .optional()
    .describe("Agents, budgets and prices declared in a file, followed as it changes ([Agents in a file](agents.md#agents-in-a-file)).")
    .meta(shownDefault("`<data dir>/corral.yaml`, if present")),
  CORRAL_ALLOWED_HOSTS: listOf(",")
    .default([])
    .describe("Extra `Host` names to answer to, comma-separated (DNS-rebinding guard).")
    .meta(shownDefault("loopback names")),
  CORRAL_ALLOWED_ORIGINS: listOf(",")
    .default([])
    .describe(
      "Extra browser origins allowed to call the API, comma-separated; only these get CORS headers, and they must send the token in `Authorization` (the panel's cookie is ignored on their requests).",
    ),
  CORRAL_AUTH_FAILURE_LIMIT: positiveInt
    .default(10)
    .describe("Wrong tokens one remote address may send within the window before it is answered 429."),
  CORRAL_AUTH_FAILURE_WINDOW_S: positiveInt.default(60).describe("That window, and how long the address then stays blocked."),
  CORRAL_SESSION_TTL_DAYS: positiveInt
    .max(3650)
    .default(30)
    .describe("A browser session ends after this many days without use ([Security](security.md))."),
  CORRAL_WORKTREE_DAYS: z.coerce
    .number()
    .int()
    .min(0)
    .max(3650)
    .default(14)
    .describe(
      "A worktree job left unmerged and undiscarded this many days after its conversation's last turn ended has its worktree folder removed; its branch keeps every change (what was left uncommitted is committed first; files git ignores go with the folder). 0: never ([Jobs](jobs.md#a-worktree-per-job)).",
    ),
  CORRAL_BODY_LIMIT_BYTES: positiveInt.default(2 * 1024 * 1024).describe("Largest REST or MCP request body; bigger ones get 413."),
  CORRAL_WORKDIR_ROOTS: listOf(path.delimiter)
    .optional()
    .describe("Directories workdirs must be inside, `:`-separated. On a runner it also bounds what of its machine may be browsed.")
    .meta(shownDefault("your home dir and the system temp dir")),
  CORRAL_DEFAULT_WORKDIR: z
    .string()
    .refine((t) => t.includes(AGENT_PLACEHOLDER), `must contain ${AGENT_PLACEHOLDER}, so each agent gets its own folder`)
    .refine((t) => t === "~" || t.startsWith("~/") || path.isAbsolute(t), "must be an absolute path or start with ~/")
    .optional()
    .describe("A new agent's workdir; `{agent}` (required) becomes its name. Absolute or `~/…`. pyCorral's is `~/misRepos/corral/{agent}`.")
    .meta(shownDefault("`<first root>/corral-work/{agent}`")),
  CORRAL_KILL_GRACE_MS: positiveInt.default(5000).describe("Time between SIGTERM and SIGKILL on cancel and timeout."),
  // At least two and a half of a runner's 2 s heartbeats, so one late heartbeat never loses a live runner's jobs.
  CORRAL_RUNNER_LEASE_S: positiveInt
    .min(5)
    .max(3600)
    .default(15)
    .describe(
      "A runner silent this long (no heartbeat; they come every 2 s) has its running jobs marked `lost` ([Several machines](runners.md#several-machines)); a runner reads it too, as how long a silent runner on another machine keeps its name.",
    ),
  CORRAL_RUNNER_ANSWER_TIMEOUT_MS: positiveInt
    .min(100)
    .max(120_000)
    .default(10_000)
    .describe(
      "How long browsing a workdir on a runner's machine waits for the runner's answer before a `504` naming it ([Several machines](runners.md#several-machines)).",
    ),
  CORRAL_REGISTRY_LOCK_TIMEOUT_MS: positiveInt
    .min(100)
    .max(600_000)
    .default(DEFAULT_LOCK_TIMEOUT_MS)
    .describe(
      "PostgreSQL: how long a statement waits for a lock another session holds (a runner's login that never lets go of one) before the call answers `503` naming that login ([Security](security.md)).",
    ),
  CORRAL_QUEUE_LIMIT: positiveInt.default(10_000).describe("Jobs that may wait in queues before launches are refused (`429` `queue_full`)."),
  CORRAL_PROGRESS_INTERVAL_MS: positiveInt.default(10_000).describe("How often `_run`, `corral_wait` and `corral_receive` send MCP progress."),
  CORRAL_MCP_SESSION_IDLE_S: positiveInt
    .default(1800)
    .describe(
      "MCP sessions with no call in progress for this long are closed (an open GET stream does not count, unless it holds a conversation registration online).",
    ),
  CORRAL_MCP_MAX_SESSIONS: positiveInt
    .default(128)
    .describe(
      "MCP sessions held at once. A new session closes the least recently used idle one; when all are busy with calls it is refused (`503`, a JSON-RPC error saying what to do).",
    ),
  CORRAL_HUB_LEASE_S: positiveInt
    .max(30 * 24 * 3600)
    .default(1800)
    .describe(
      "A conversation registration's handle (what `corral_register` answers) unused this long ends, with its name; every call with the handle, a receive in progress and its client's open stream renew it ([Conversations](conversations.md#presence)).",
    ),
  CORRAL_HUB_PRESENCE_S: positiveInt
    .max(3600)
    .default(60)
    .describe(
      "A conversation registration is online, and holds its name, while its client was seen this recently: a call with its handle, a receive in progress, or the open event stream of the MCP session it registered in. Past it the agent shows offline and a new registration takes the name; the handle still works until `CORRAL_HUB_LEASE_S` unless someone did ([Conversations](conversations.md#presence)). Never longer than `CORRAL_HUB_LEASE_S`.",
    ),
  CORRAL_HUB_MAX_REGISTRATIONS: positiveInt
    .max(100_000)
    .default(512)
    .describe(
      "Conversation registrations live at once over all sessions, MCP and REST; past it `corral_register` is refused (`503`) until one leaves or expires.",
    ),
  CORRAL_MCP_MAX_CALLS_PER_SESSION: positiveInt
    .max(10_000)
    .default(16)
    .describe("Calls one MCP session has in progress at once (more get `429`), and the most messages a JSON-RPC batch may hold."),
  CORRAL_MCP_MAX_PENDING_BYTES: positiveInt
    .min(1024 * 1024)
    .default(64 * 1024 * 1024)
    .describe(
      "MCP answers written but not yet read by their clients, over all sessions and 2026-07-28 requests; past it the connections that have held theirs longest are closed.",
    ),
  CORRAL_WS_MAX_CONNECTIONS: positiveInt.default(64).describe("WebSocket connections at once; more are closed with `1013` and the reason."),
  CORRAL_MAX_CONNECTIONS: positiveInt
    .min(16)
    .optional()
    .describe(
      "HTTP connections held at once, half of them at most idle (no request in progress); the oldest idle one is closed to make room. A value that leaves less than a quarter of `ulimit -n` (at least 256) for the registry, job files and workers is refused at start.",
    )
    .meta(shownDefault("half of `ulimit -n`, at most 10000")),
  // Node requires it no longer than the whole request's 5 minutes (app.ts).
  CORRAL_HEADERS_TIMEOUT_S: positiveInt
    .max(300)
    .default(10)
    .describe("A connection has this long to send a request's headers, else it gets `408` and is closed (a whole request has 5 minutes)."),
  CORRAL_LOG_LEVEL: z
    .enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"])
    .default("info")
    .describe("`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`."),
  CORRAL_GEMINI_MODEL: z.string().min(1).default("gemini-2.5-flash").describe("Default model of `gemini` (as in pyCorral)."),
  CORRAL_GEMINI_AGENT: AgentNameSchema.optional()
    .describe(
      "The agent pyCorral's `gemini_run`, `gemini_run_async` and `gemini_done` (and `/mcp/gemini`) run: `agy` (Antigravity CLI) for individual Google accounts, which Gemini CLI no longer serves since 2026-06-18 ([Agents](agents.md#antigravity-cli-agy)). It must name an enabled agent; `gemini_*` calls fail saying so otherwise.",
    )
    .meta(shownDefault("`gemini`")),
  CORRAL_OPENCODE_MODEL: z.string().min(1).default("opencode/deepseek-v4-flash-free").describe("Default model of `opencode`."),
  CORRAL_OLLAMA_MODEL: z.string().min(1).default("qwen2.5:7b").describe("Default model of `ollama`."),
  CORRAL_QWEN_MODEL: z.string().min(1).default("qwen2.5:7b").describe("Default model of `qwen`."),
  CORRAL_GEMMA_MODEL: z.string().min(1).default("aliafshar/gemma3-it-qat-tools:4b").describe("Default model of `gemma`."),
  CORRAL_OLLAMA_URL: z.url().default("http://127.0.0.1:11434").describe("Ollama server of the built-in Ollama agents."),
  CORRAL_OLLAMA_MAX_CTX: positiveInt
    .default(32_768)
    .describe("Cap on the `num_ctx` an Ollama job asks for (the model's own context length, if smaller, wins)."),
  CORRAL_OLLAMA_MAX_ITERATIONS: positiveInt.default(30).describe("Model turns an Ollama job may take; past it the job fails."),
  CORRAL_DEV_WEB: z.enum(["0", "1"]).default("0").describe("`1` serves the panel from source with hot reload (set by `pnpm dev`)."),
  CORRAL_STOP_WORKERS_ON_EXIT: z
    .enum(["0", "1"])
    .default("0")
    .describe(
      "`1` cancels queued and running jobs when the server stops (SIGTERM, Ctrl-C) instead of leaving workers running for the next start; with runners, only `local`'s jobs.",
    ),
  CORRAL_ALLOW_LOADER_ENV: z
    .enum(["0", "1"])
    .default("0")
    .describe(
      "`1` lets agents' `env` set loader variables (`LD_PRELOAD`, `NODE_OPTIONS`, `BASH_ENV`, `GIT_CONFIG_*`, `HOME`…; the list is in [Agents](agents.md#environment)), which are refused otherwise.",
    ),
  CORRAL_PASS_ENV: listOf(",")
    .pipe(
      z.array(
        z
          .string()
          .regex(/^[A-Za-z_][A-Za-z0-9_]*\*?$/, "list variable names, or prefixes ending in *, separated by commas (HTTP_PROXY,AWS_*)")
          .refine((name) => !name.startsWith("CORRAL"), "Corral's own settings are never passed to workers"),
      ),
    )
    .default([])
    .describe(
      "More of the server's variables every worker gets, comma-separated names or prefixes ending in `*` (`AWS_*,SSH_AUTH_SOCK`); workers otherwise get only the basics and their kind's own ([Agents](agents.md#environment)). `CORRAL_*` names are refused.",
    ),
  HOME: z.string().optional(),
  XDG_DATA_HOME: z.string().optional(),
});

/**
 * `CORRAL_<AGENT>_BIN`: the binary of a built-in agent. One variable per agent, so a pattern
 * beside EnvSchema rather than a key of it.
 */
export const BinOverrideSetting = {
  variable: "CORRAL_<AGENT>_BIN",
  pattern: /^CORRAL_([A-Z0-9_]+)_BIN$/,
  schema: z
    .string()
    .min(1)
    .describe("Binary of a built-in agent, e.g. `CORRAL_GEMINI_BIN=/opt/gemini/bin/gemini`.")
    .meta(shownDefault("the CLI's name on `PATH`")),
};

/**
 * How long a `_done` on a just-launched job waits for its end before answering `pendiente`: a
 * poller of a short job hears of its end as it is stored, not a poll interval and a round trip later.
 */
const DONE_LINGER_MS = 50;

/** The setting that points pyCorral's `<tools>_*` names at another agent (`CORRAL_GEMINI_AGENT`). */
export const toolAgentSetting = (tools: string): string => `CORRAL_${tools.toUpperCase()}_AGENT`;

export interface AppConfig {
  host: string;
  port: number;
  dataDir: string;
  /** The registry in PostgreSQL; null: SQLite, `<dataDir>/corral.db`. */
  databaseUrl: string | null;
  /** Null: read or create `<dataDir>/token`. */
  token: string | null;
  allowedHosts: string[];
  allowedOrigins: string[];
  workdirRoots: string[];
  /** Where a new agent works unless told otherwise, with `{agent}` for its name (see `defaultWorkdir`). */
  defaultWorkdir: string;
  homeDir: string;
  /** The config file that declares agents, budgets and prices (config-file/). */
  configFile: string;
  /** `CORRAL_CONFIG` named it, so its absence is an error to show rather than "no file". */
  configFileNamed: boolean;
  /** The folder Corral was started from: where `pnpm start` was typed (INIT_CWD), else the process's own. */
  startDir: string;
  killGraceMs: number;
  /**
   * A `_done` on a job launched less than this long ago, not ended yet, waits for its end until
   * then (mcp/tools/agent-tools.ts); not a setting: 50 ms, which tests raise.
   */
  doneLingerMs: number;
  /** A runner silent this long (no heartbeat) is given up on: its running jobs end `lost`. */
  runnerLeaseMs: number;
  /** How long a browsing request waits for the runner holding the workdir to answer. */
  runnerAnswerTimeoutMs: number;
  /** How long a statement in PostgreSQL waits for a lock before the call answers 503 naming who holds it. */
  registryLockTimeoutMs: number;
  queueLimit: number;
  progressIntervalMs: number;
  mcpSessionIdleMs: number;
  /** A hub registration's handle unused this long ends (its lease). */
  hubLeaseMs: number;
  /** A hub registration not seen this long is offline and its name free to take (at most hubLeaseMs). */
  hubPresenceMs: number;
  /** Hub registrations live at once, over every session and door. */
  hubMaxRegistrations: number;
  /** MCP sessions held at once; past it the least recently used idle one is closed. */
  mcpMaxSessions: number;
  /** Requests one MCP session has answered at once (and the most one batch may hold). */
  mcpMaxCallsPerSession: number;
  /** MCP answers written but not yet read by their clients, over all sessions, before the oldest are dropped. */
  mcpMaxPendingBytes: number;
  /** WebSocket connections accepted at once. */
  wsMaxConnections: number;
  /** HTTP connections held at once, idle ones included (security/connection-limits.ts). */
  maxConnections: number;
  /** Time a connection has to send a request's headers. */
  headersTimeoutMs: number;
  logLevel: z.infer<typeof EnvSchema>["CORRAL_LOG_LEVEL"];
  /** `CORRAL_<AGENT>_MODEL`: the model a built-in agent runs when neither it nor the job names one. */
  defaultModels: Record<string, string>;
  ollamaUrl: string;
  /** Cap on `options.num_ctx`: a model's full context can need more memory than the machine has. */
  ollamaMaxCtx: number;
  /** Model turns an Ollama job may take before it fails. */
  ollamaMaxIterations: number;
  /** `CORRAL_<AGENT>_BIN` overrides, keyed by lowercase agent name. */
  binOverrides: Record<string, string>;
  /**
   * pyCorral's tool names that run another agent than the one they are named after: the name
   * (`gemini` for `gemini_run`…) → the agent (`CORRAL_GEMINI_AGENT`).
   */
  toolAgents: Readonly<Record<string, string>>;
  /** Serve the panel from its sources with hot reload (`pnpm dev`). */
  devWeb: boolean;
  /** Cancel running jobs when the server stops, instead of leaving them for the next start. */
  stopWorkersOnExit: boolean;
  /** Agents' `env` may set loader variables (LD_PRELOAD, NODE_OPTIONS…); see agents/agent-env.ts. */
  allowLoaderEnv: boolean;
  /**
   * The server's own environment without Corral's settings (no CORRAL_*): what the server itself
   * reads (an API agent's key). A worker gets only the part agents/inherited-env.ts picks from it.
   */
  serverEnv: Readonly<Record<string, string>>;
  /** `CORRAL_PASS_ENV`: more of the server's variables every worker gets (names, or prefixes ending in `*`). */
  passEnv: string[];
  /** Wrong tokens one remote address may send per window before it is answered 429. */
  authFailureLimit: number;
  authFailureWindowMs: number;
  /** Largest request body (REST and MCP JSON) before a 413. */
  bodyLimitBytes: number;
  /** How long a browser session lasts without being used. */
  sessionTtlMs: number;
  /** How long an ended worktree job's folder stays unreviewed before it is archived (its branch kept); null: for good. */
  worktreeKeepMs: number | null;
}

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  // An empty variable means "not set", as in a shell's `CORRAL_TOKEN= pnpm start`.
  const set = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ""));
  const parsed = EnvSchema.safeParse(set);
  if (!parsed.success) {
    const details = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("\n  ");
    throw new ConfigError(`Invalid settings:\n  ${details}`);
  }
  const e = parsed.data;
  if (!e.CORRAL_TOKEN && !isLoopbackHost(e.CORRAL_HOST)) {
    throw new ConfigError(
      `Refusing to listen on CORRAL_HOST=${e.CORRAL_HOST} without CORRAL_TOKEN: other machines could reach Corral. ` +
        "Set CORRAL_TOKEN to a secret of at least 16 characters, or leave CORRAL_HOST unset to listen on 127.0.0.1 only.",
    );
  }
  const homeDir = e.HOME ?? os.homedir();
  const dataHome = e.XDG_DATA_HOME ?? path.join(homeDir, ".local", "share");
  const dataDir = path.resolve(e.CORRAL_DATA_DIR ?? path.join(dataHome, "corral"));
  const workdirRoots = (e.CORRAL_WORKDIR_ROOTS ?? [homeDir, os.tmpdir()]).map((r) => path.resolve(expandHome(r, homeDir)));
  const binOverrides: Record<string, string> = {};
  const serverEnv: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) continue;
    // Corral's settings (its token, the registry's password) are read above, and by nothing else.
    if (!key.startsWith("CORRAL_")) serverEnv[key] = value;
    const bin = BinOverrideSetting.pattern.exec(key);
    if (bin?.[1] && BinOverrideSetting.schema.safeParse(value).success) binOverrides[bin[1].toLowerCase()] = value;
  }
  return {
    host: e.CORRAL_HOST,
    port: e.CORRAL_PORT,
    dataDir,
    databaseUrl: e.CORRAL_DATABASE_URL ?? null,
    token: e.CORRAL_TOKEN ?? null,
    allowedHosts: e.CORRAL_ALLOWED_HOSTS,
    allowedOrigins: e.CORRAL_ALLOWED_ORIGINS,
    workdirRoots,
    defaultWorkdir: e.CORRAL_DEFAULT_WORKDIR ?? defaultWorkdirTemplate(workdirRoots, dataDir, homeDir),
    homeDir,
    configFile: path.resolve(expandHome(e.CORRAL_CONFIG ?? path.join(dataDir, "corral.yaml"), homeDir)),
    configFileNamed: e.CORRAL_CONFIG !== undefined,
    // pnpm runs the server in apps/server; a config.yaml a user means sits where they typed the command.
    startDir: path.resolve(set.INIT_CWD ?? process.cwd()),
    killGraceMs: e.CORRAL_KILL_GRACE_MS,
    doneLingerMs: DONE_LINGER_MS,
    runnerLeaseMs: e.CORRAL_RUNNER_LEASE_S * 1000,
    runnerAnswerTimeoutMs: e.CORRAL_RUNNER_ANSWER_TIMEOUT_MS,
    registryLockTimeoutMs: e.CORRAL_REGISTRY_LOCK_TIMEOUT_MS,
    queueLimit: e.CORRAL_QUEUE_LIMIT,
    progressIntervalMs: e.CORRAL_PROGRESS_INTERVAL_MS,
    mcpSessionIdleMs: e.CORRAL_MCP_SESSION_IDLE_S * 1000,
    hubLeaseMs: e.CORRAL_HUB_LEASE_S * 1000,
    hubPresenceMs: Math.min(e.CORRAL_HUB_PRESENCE_S, e.CORRAL_HUB_LEASE_S) * 1000,
    hubMaxRegistrations: e.CORRAL_HUB_MAX_REGISTRATIONS,
    mcpMaxSessions: e.CORRAL_MCP_MAX_SESSIONS,
    mcpMaxCallsPerSession: e.CORRAL_MCP_MAX_CALLS_PER_SESSION,
    mcpMaxPendingBytes: e.CORRAL_MCP_MAX_PENDING_BYTES,
    wsMaxConnections: e.CORRAL_WS_MAX_CONNECTIONS,
    maxConnections: maxConnections(e.CORRAL_MAX_CONNECTIONS, openFilesLimit()),
    headersTimeoutMs: e.CORRAL_HEADERS_TIMEOUT_S * 1000,
    logLevel: e.CORRAL_LOG_LEVEL,
    defaultModels: {
      gemini: e.CORRAL_GEMINI_MODEL,
      opencode: e.CORRAL_OPENCODE_MODEL,
      ollama: e.CORRAL_OLLAMA_MODEL,
      qwen: e.CORRAL_QWEN_MODEL,
      gemma: e.CORRAL_GEMMA_MODEL,
    },
    ollamaUrl: e.CORRAL_OLLAMA_URL,
    ollamaMaxCtx: e.CORRAL_OLLAMA_MAX_CTX,
    ollamaMaxIterations: e.CORRAL_OLLAMA_MAX_ITERATIONS,
    binOverrides,
    // Pointing `gemini` at itself is the default: nothing to redirect.
    toolAgents: e.CORRAL_GEMINI_AGENT && e.CORRAL_GEMINI_AGENT !== "gemini" ? { gemini: e.CORRAL_GEMINI_AGENT } : {},
    devWeb: e.CORRAL_DEV_WEB === "1",
    stopWorkersOnExit: e.CORRAL_STOP_WORKERS_ON_EXIT === "1",
    allowLoaderEnv: e.CORRAL_ALLOW_LOADER_ENV === "1",
    serverEnv,
    passEnv: e.CORRAL_PASS_ENV,
    authFailureLimit: e.CORRAL_AUTH_FAILURE_LIMIT,
    authFailureWindowMs: e.CORRAL_AUTH_FAILURE_WINDOW_S * 1000,
    bodyLimitBytes: e.CORRAL_BODY_LIMIT_BYTES,
    sessionTtlMs: e.CORRAL_SESSION_TTL_DAYS * 24 * 3600 * 1000,
    worktreeKeepMs: e.CORRAL_WORKTREE_DAYS === 0 ? null : e.CORRAL_WORKTREE_DAYS * 24 * 3600 * 1000,
  };
}

/**
 * Connections the server may hold: by default half the file descriptors the process may open (at
 * most 10,000), and never so many that the registry, job output, workers' pipes and file watchers
 * are left without: a quarter of the limit, at least 256, stays for them.
 */
function maxConnections(wanted: number | undefined, fdLimit: number | null): number {
  if (fdLimit === null) return wanted ?? 1024;
  const most = fdLimit - Math.max(256, Math.floor(fdLimit / 4));
  if (wanted === undefined) return Math.max(16, Math.min(10_000, Math.floor(fdLimit / 2), most));
  if (wanted > most) {
    throw new ConfigError(
      `Invalid settings:\n  CORRAL_MAX_CONNECTIONS: ${wanted} would leave too few file descriptors for the registry, job output and workers: ` +
        `this process may open ${fdLimit} (ulimit -n), so use at most ${Math.max(most, 0)}, or raise ulimit -n`,
    );
  }
  return wanted;
}

/** 127.0.0.0/8, ::1 and localhost: addresses only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || h === "0:0:0:0:0:0:0:1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || /^::ffff:127\./.test(h);
}

/**
 * `<root>/corral-work/{agent}` under the first allowed root where that folder neither is, holds nor
 * lies in the data dir: a new agent's workdir then passes the launch checks with any roots.
 */
function defaultWorkdirTemplate(roots: string[], dataDir: string, homeDir: string): string {
  const folder = (root: string) => path.join(root, DEFAULT_WORKDIR_FOLDER);
  const root = roots.find((r) => !isInside(folder(r), dataDir) && !isInside(dataDir, folder(r))) ?? roots[0] ?? homeDir;
  return path.join(folder(root), AGENT_PLACEHOLDER);
}

/** The workdir a new agent gets: `CORRAL_DEFAULT_WORKDIR` (or its default) for that agent's name. */
export function defaultWorkdir(config: Pick<AppConfig, "defaultWorkdir">, agent: string): string {
  return config.defaultWorkdir.replaceAll(AGENT_PLACEHOLDER, agent);
}

export function expandHome(p: string, homeDir: string): string {
  if (p === "~") return homeDir;
  if (p.startsWith("~/")) return path.join(homeDir, p.slice(2));
  return p;
}
