import type { AgentAvailability, AgentField, AgentKindDescriptor, OutputStream, ReadableEvent } from "@corral/shared";
import type { AppConfig } from "../config.js";
import type { AgentRow } from "../db/schema.js";
import type { SandboxGit } from "../worktrees/sandbox-commits.js";

/** What a job asks of its agent, with every default already applied. */
export interface JobSpec {
  jobId: string;
  prompt: string;
  workdir: string;
  model: string | null;
  agent: AgentRow;
  /** Set when the job continues an earlier job's conversation (`session` at launch). */
  followUp?: FollowUp;
  /** A worktree job whose worker (or its commands) runs in the sandbox: the git folder it commits to there. */
  sandboxGit?: SandboxGit;
}

/** The earlier turn a follow-up job continues. */
export interface FollowUp {
  /** The earlier job, of the same agent. */
  jobId: string;
  /** The session id that job's worker reported, which a CLI resumes; null for in-process kinds that keep their history in the registry. */
  workerSession: string | null;
}

/** Tokens, cost and model as a worker reported them; absent fields are unknown. */
export interface UsageReport {
  model?: string;
  inputTokens?: number;
  outputTokens?: number;
  cachedInputTokens?: number;
  costUsd?: number;
}

export interface WorkerResult {
  /** The worker's answer, when it can be told apart from the rest of its output. */
  finalText?: string;
  usage?: UsageReport;
  /** Why it failed, when its output says so (an API error in a CLI's JSON events). */
  error?: string;
  /**
   * The worker's own account of a failed run, which says more than its exit code (Antigravity
   * CLI's result status, or no result at all; Gemini CLI refusing the account): the job fails with
   * this as its error, whatever the exit code, 0 included. Without it an exit code 0 is a success.
   */
  failure?: string;
  /**
   * The CLI's own session id for this run, when its output gives one of the right shape (Claude
   * Code's and Gemini CLI's `session_id`, OpenCode's `sessionID`, Codex's thread id): what a follow-up resumes.
   */
  sessionId?: string;
}

/** Reads a worker's output as it is printed, in chunks of any size. */
export interface OutputParser {
  /** Returns usage known so far when this chunk changed it. */
  push(text: string, stream: OutputStream): UsageReport | undefined;
  finish(): WorkerResult;
}

export interface Invocation {
  command: string;
  args: string[];
  /** Added to the worker's environment (agents/worker-env.ts). */
  env: Record<string, string>;
  /** Bytes the worker's fd 3 gives to read (bubblewrap's seccomp program), written by whoever spawns it. */
  fd3?: Buffer;
  cwd: string;
}

/** A CLI worker: pure functions from a job to an invocation and from output to results. */
export interface CliAdapter {
  /** Executable looked up on PATH unless the agent or `CORRAL_<AGENT>_BIN` names another. */
  defaultBinary: string;
  /**
   * How to get the binary, as a clause that completes "<binary> was not found on PATH; …, or set
   * CORRAL_<AGENT>_BIN to its path": an imperative starting lowercase, e.g. "install it with npm install -g x".
   */
  installHint: string;
  invocation(spec: JobSpec, binary: string): Invocation;
  createParser(spec: JobSpec): OutputParser;
  /**
   * The final text is stdout as printed (plainTextParser), so the panel does not show it twice:
   * once in the output and again as the answer.
   */
  answerIsOutput?: boolean;
  /** A workdir file that receives the final text, as pyCorral wrote it. */
  finalTextFile?: string;
  /**
   * The model a run used, read from the CLI's own record of the session once it has ended, for a
   * CLI whose output does not name it. `env` is the worker's environment (HOME, the CLI's settings).
   */
  sessionModel?(sessionId: string, env: Record<string, string | undefined>): string | undefined;
  /**
   * The CLI finds a session it is asked to resume from any directory (Codex). Others keep their
   * sessions per working directory, so a follow-up must run in the earlier job's workdir.
   */
  resumesAnywhere?: boolean;
  /** Files and folders under $HOME where the CLI keeps its login and sessions; a sandbox lets it write them. */
  stateDirs: readonly string[];
  /**
   * The server's variables this CLI's workers get on top of the machine's basics
   * (agents/worker-env.ts): its own keys and settings, as names or prefixes ending in `*`. Given
   * the job's model, for a CLI whose key depends on the provider it names (OpenCode).
   */
  ownEnv(model: string | null, agent?: Pick<AgentRow, "command">): readonly string[];
  /**
   * A worker that ends its work itself when asked: on a cancel or a timeout its own process alone (not the
   * `sh` wrapper, not its children) gets `signal` first, and its group is ended once it exits or after `graceMs` (the ACP client sends
   * `session/cancel`). Unset: the whole group gets SIGTERM at once.
   */
  stopFirst?: { signal: NodeJS.Signals; graceMs: number };
  /** Arguments that make the CLI print its version, or null when it must not be run to ask (any executable). */
  versionArgs: string[] | null;
  /**
   * For a kind that runs any executable (acp): what Corral knows of the program an agent names,
   * when it knows it — how to install it (a clause like `installHint`'s), how to ask its version,
   * and its state folders (the kind's own `stateDirs` are for programs it does not know: none).
   */
  knownCommand?(agent: Pick<AgentRow, "command">): { installHint: string; versionArgs: string[] | null; stateDirs: readonly string[] } | undefined;
}

/** Keeps the worker's stdout as its final text, bounded so a huge output stays out of memory. */
export function plainTextParser(maxChars = 256 * 1024): OutputParser {
  let text = "";
  let truncated = false;
  return {
    push(chunk, stream) {
      if (stream !== "out" || truncated) return undefined;
      if (text.length + chunk.length > maxChars) {
        text += chunk.slice(0, maxChars - text.length);
        truncated = true;
        return undefined;
      }
      text += chunk;
      return undefined;
    },
    finish() {
      const trimmed = text.trim();
      return trimmed ? { finalText: truncated ? `${trimmed}\n[…truncated]` : trimmed } : {};
    },
  };
}

/** A line of output, or (`whole` false) a piece of one longer than its splitter's limit. */
export interface SplitLine {
  text: string;
  whole: boolean;
}

/**
 * Cuts chunks into whole lines; a line longer than `maxLine` is passed on in pieces, each marked
 * as one up to the line's end: a piece is never an event, though a worker could align one to look
 * like a whole event (a tool input holding JSON objects at the cut points).
 */
export class LineSplitter {
  private partial = "";
  private cutting = false;

  constructor(private readonly maxLine = 1024 * 1024) {}

  push(text: string): SplitLine[] {
    const lines: SplitLine[] = [];
    let start = 0;
    let data = this.partial + text;
    for (let nl = data.indexOf("\n"); nl >= 0; nl = data.indexOf("\n", start)) {
      lines.push({ text: data.slice(start, nl + 1), whole: !this.cutting });
      this.cutting = false;
      start = nl + 1;
    }
    data = data.slice(start);
    if (data.length > this.maxLine) {
      lines.push({ text: data, whole: false });
      this.cutting = true;
      data = "";
    }
    this.partial = data;
    return lines;
  }

  /** What is left after the last newline. */
  end(): SplitLine[] {
    const rest = this.partial;
    const whole = !this.cutting;
    this.partial = "";
    this.cutting = false;
    return rest ? [{ text: rest, whole }] : [];
  }
}

/** What an in-process worker (the Ollama loop) may do while it runs. */
export interface WorkerIO {
  /** Appends to the job's output log, as a process's stdout or stderr would. */
  write(stream: OutputStream, text: string): void;
  /** Usage known so far. */
  usage(report: UsageReport): void;
  /** Aborted on cancel, timeout or budget stop. */
  signal: AbortSignal;
}

/** A message of an in-process worker's conversation as the registry keeps it (the system prompt is not kept). */
export interface TurnMessage {
  role: "user" | "assistant" | "tool";
  content: string;
  /** An assistant message's tool calls, as the model made them. */
  toolCalls: Json[] | null;
  /** A tool message's tool. */
  toolName: string | null;
}

/**
 * Where in-process workers keep their conversations (the registry), so a follow-up sends them again:
 * a CLI keeps its own sessions, an in-process worker has nowhere else to.
 */
export interface ConversationStore {
  /**
   * The turns a follow-up of `jobId` continues, oldest first: that job's messages and those of the
   * jobs it followed up, one array per job, the `maxTurns` newest.
   */
  turns(jobId: string, maxTurns: number): Promise<TurnMessage[][]>;
  /** Stores the job's message number `seq` (0 is its prompt). */
  append(jobId: string, seq: number, message: TurnMessage): Promise<void>;
  /** Forgets the job's messages: a retry's attempt runs the turn again from its prompt. */
  restart(jobId: string): Promise<void>;
  /** Whether the job's worker began its conversation (its prompt is kept), so it can be followed up. */
  began(jobId: string): Promise<boolean>;
}

/** A worker that runs inside Corral, talking to a server over HTTP instead of spawning a CLI. */
export interface InProcessAdapter {
  /** Runs the model's commands in the sandbox (an API agent's bash), where a worktree job's git needs its own folder. */
  sandboxesCommands?: boolean;
  /** Resolves with the result; throws an Error whose message is the job's error. */
  run(spec: JobSpec, io: WorkerIO): Promise<WorkerResult>;
}

/** A built-in agent of a kind, stored at first start; users may change all but its name and kind. */
export interface BuiltinAgent {
  name: string;
  description: string;
  /** The program it starts, for a kind that runs any executable (a built-in ACP agent). */
  command?: string;
}

/** One JSON event a worker printed, as its kind's reader gets it. */
export type Json = Record<string, unknown>;

interface AgentKindBase {
  kind: string;
  /** Who bills the agent's work: the price table's provider for its models. */
  provider: string;
  /**
   * The settings its agents take, in the forms' order (built with agents/kinds/fields.ts): the
   * panel renders its create and edit forms from them, and the server refuses an agent without
   * a field declared required.
   */
  fields: readonly AgentField[];
  /** The panel's Add dialog for its agents; unset: they are added through REST or the config file only. */
  adding?: NonNullable<AgentKindDescriptor["adding"]>;
  /** Its agents' models are an Ollama server's (the Ollama routes list them for the panel). */
  ollamaModels?: boolean;
  /** A new agent's provider when it depends on the agent's fields (an API agent's `api`); else `provider`. */
  providerFor?: (fields: Partial<Pick<AgentRow, "api" | "command">>) => string | undefined;
  builtins: BuiltinAgent[];
  /**
   * How many jobs of one of its agents run at once unless the agent says otherwise: built-in,
   * added in the panel or over REST, or declared in the config file alike. Unset: 4.
   */
  maxConcurrent?: number;
  /** Whether new agents of this kind try transient failures again by default. */
  retries: boolean;
  /**
   * What the panel's Readable view shows for one JSON event on stdout: [] for events with
   * nothing to say. Kinds that print plain text have none and show their output as printed.
   */
  readEvent?: (ev: Json) => ReadableEvent[];
  /**
   * The key of a JSON line that names its event, whose value is a string: `type` unless set
   * (Antigravity CLI's is `event`). A line without it reads as printed.
   */
  eventKey?: string;
  /**
   * The kind continues a conversation (`JobSpec.followUp`): a CLI with its own resume mechanism, an
   * in-process kind by sending the history again. A follow-up of any other kind is refused at launch.
   */
  resumes?: boolean;
  /**
   * The one conversation of its worker every job of the agent joins, in words, when the agent's
   * settings pin one (an OpenCode server agent's OPENCODE_SESSION_ID); null when they do not. Such
   * an agent answers in one hub session at most: two sessions' messages would mix in one conversation.
   */
  pinnedConversation?: (agent: Pick<AgentRow, "env">) => string | null;
}

/** A kind whose workers are a CLI Corral spawns. */
export interface CliAgentKind extends AgentKindBase {
  cli: CliAdapter;
}

/** A kind whose workers run inside the server (the Ollama tool loop). */
export interface InProcessAgentKind extends AgentKindBase {
  inProcess: {
    adapter(config: AppConfig, conversations: ConversationStore): InProcessAdapter;
    /** Whether an agent can run now (its server answers, its model is there), checked when asked. */
    availability(agent: AgentRow, config: AppConfig): Promise<AgentAvailability>;
  };
}

/** Everything about one agent kind; agents/kinds/index.ts lists them, agents/kind-lookup.ts finds one. */
export type AgentKindModule = CliAgentKind | InProcessAgentKind;
