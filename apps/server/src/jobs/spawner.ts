import { type ChildProcess, fork } from "node:child_process";
import path from "node:path";
import { installRoot } from "../lib/install-root.js";

/** A plain script found in the checkout, so the sources and the built server run the same file. */
const SCRIPT = path.join(installRoot, "apps/server/src/jobs/spawner.mjs");

export interface SpawnRequest {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Files the process's stdout and stderr are appended to. */
  out: string;
  err: string;
  /** Base64 of what the process reads on its fd 3 (a pipe, then end of file): bubblewrap's seccomp program. */
  fd3?: string;
}

/** Why a process was not started; null when the system gave no reason at once (a missing cwd, say). */
export interface NotSpawned {
  error: string | null;
  /** The spawner ended before answering: the process may have started all the same. */
  unanswered?: true;
}

export interface Spawned {
  pid: number;
  pidStart: number | null;
  /** `{ code }` once it exited; null if the spawner ended first and can no longer tell. */
  exit: Promise<{ code: number | null } | null>;
}

type Answer =
  | { id: number; pid: number; pidStart: number | null }
  | { id: number; error: string | null; unanswered?: true }
  | { id: number; exit: number | null };

interface Pending {
  /** Set until the start is answered. */
  started: ((answer: Answer) => void) | null;
  exited: (exit: { code: number | null } | null) => void;
}

/** One spawner process and what it was asked. */
interface Channel {
  child: ChildProcess;
  pending: Map<number, Pending>;
  /** Closed by this server: it ends once the starts already asked for are answered. */
  closing: boolean;
}

/**
 * Starts processes through spawner.mjs, a small child started with the first request: a fork from
 * this large process blocks its event loop for milliseconds, from that one for a fraction. The
 * child holds this process open only while it has requests or processes to report on.
 */
export class Spawner {
  private channel: Channel | null = null;
  private nextId = 1;

  /** The spawner's own pid, once it runs. */
  get pid(): number | undefined {
    return this.channel?.child.pid;
  }

  spawn(request: SpawnRequest): Promise<Spawned | NotSpawned> {
    const channel = this.channel ?? this.open();
    const id = this.nextId++;
    return new Promise((resolve) => {
      let exited: Pending["exited"] = () => {};
      const exit = new Promise<{ code: number | null } | null>((settle) => {
        exited = settle;
      });
      const started = (answer: Answer) => {
        if ("pid" in answer) resolve({ pid: answer.pid, pidStart: answer.pidStart, exit });
        else resolve("error" in answer ? { error: answer.error, ...(answer.unanswered && { unanswered: true }) } : { error: null });
      };
      channel.pending.set(id, { started, exited });
      holdOpen(channel);
      channel.child.send({ id, ...request });
    });
  }

  /**
   * Ends the spawner; the processes it started go on, and their exits are no longer reported. A
   * start already asked for is answered first, so that whoever asked knows of its process.
   */
  close(): void {
    const channel = this.channel;
    if (!channel) return;
    this.channel = null;
    channel.closing = true;
    for (const [id, pending] of channel.pending) if (!pending.started) channel.pending.delete(id);
    closeWhenAnswered(channel);
  }

  private open(): Channel {
    // No execArgv and no environment of this server: a loader or a profiler meant for it stays out.
    const child = fork(SCRIPT, [], { execArgv: [], env: {}, stdio: ["ignore", "ignore", "inherit", "ipc"] });
    const channel: Channel = { child, pending: new Map(), closing: false };
    child.on("message", (answer: Answer) => answered(channel, answer));
    child.once("exit", () => this.ended(channel));
    child.once("error", () => this.ended(channel));
    this.channel = channel;
    return channel;
  }

  /** The spawner is gone (killed, crashed): what it followed is told so, and the next request starts another. */
  private ended(channel: Channel): void {
    if (this.channel === channel) this.channel = null;
    const pending = [...channel.pending.values()];
    channel.pending.clear();
    for (const { started, exited } of pending) {
      started?.({ id: 0, error: "the worker spawner ended before it started the worker", unanswered: true });
      exited(null);
    }
  }
}

function answered(channel: Channel, answer: Answer): void {
  const pending = channel.pending.get(answer.id);
  if (!pending) return;
  if ("exit" in answer) {
    channel.pending.delete(answer.id);
    pending.exited({ code: answer.exit });
  } else {
    pending.started?.(answer);
    pending.started = null;
    if (!("pid" in answer) || channel.closing) channel.pending.delete(answer.id);
  }
  if (channel.closing) closeWhenAnswered(channel);
  else holdOpen(channel);
}

function closeWhenAnswered(channel: Channel): void {
  if (channel.pending.size > 0) return;
  channel.child.unref();
  if (channel.child.connected) channel.child.disconnect();
}

function holdOpen({ child, pending }: Channel): void {
  if (pending.size > 0) {
    child.ref();
    child.channel?.ref();
  } else {
    child.unref();
    child.channel?.unref();
  }
}
