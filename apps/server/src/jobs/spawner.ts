import { type ChildProcess, fork } from "node:child_process";
import path from "node:path";
import { repoRoot } from "../lib/repo-root.js";

/** A plain script found in the checkout, so the sources and the built server run the same file. */
const SCRIPT = path.join(repoRoot, "apps/server/src/jobs/spawner.mjs");

export interface SpawnRequest {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Files the process's stdout and stderr are appended to. */
  out: string;
  err: string;
}

/** Why a process was not started; null when the system gave no reason at once (a missing cwd, say). */
export interface NotSpawned {
  error: string | null;
}

export interface Spawned {
  pid: number;
  pidStart: number | null;
  /** `{ code }` once it exited; null if the spawner ended first and can no longer tell. */
  exit: Promise<{ code: number | null } | null>;
}

type Answer = { id: number; pid: number; pidStart: number | null } | { id: number; error: string | null } | { id: number; exit: number | null };

interface Pending {
  started: ((answer: Answer) => void) | null;
  exited: (exit: { code: number | null } | null) => void;
}

/**
 * Starts processes through spawner.mjs, a small child started with the first request: a fork from
 * this large process blocks its event loop for milliseconds, from that one for a fraction. The
 * child holds this process open only while it has requests or processes to report on.
 */
export class Spawner {
  private child: ChildProcess | null = null;
  private pending = new Map<number, Pending>();
  private nextId = 1;

  /** The spawner's own pid, once it runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  spawn(request: SpawnRequest): Promise<Spawned | NotSpawned> {
    const child = this.child ?? this.startChild();
    const id = this.nextId++;
    return new Promise((resolve) => {
      let exited: Pending["exited"] = () => {};
      const exit = new Promise<{ code: number | null } | null>((settle) => {
        exited = settle;
      });
      const started = (answer: Answer) => {
        if ("pid" in answer) resolve({ pid: answer.pid, pidStart: answer.pidStart, exit });
        else resolve({ error: "error" in answer ? answer.error : null });
      };
      this.pending.set(id, { started, exited });
      this.holdOpen();
      child.send({ id, ...request });
    });
  }

  /** Ends the spawner; the processes it started go on, and their exits are no longer reported. */
  close(): void {
    const child = this.child;
    this.child = null;
    this.pending.clear();
    if (child?.connected) child.disconnect();
  }

  private startChild(): ChildProcess {
    // No execArgv and no environment of this server: a loader or a profiler meant for it stays out.
    const child = fork(SCRIPT, [], { execArgv: [], env: {}, stdio: ["ignore", "ignore", "inherit", "ipc"] });
    child.on("message", (answer: Answer) => this.answered(answer));
    child.once("exit", () => this.ended(child));
    child.once("error", () => this.ended(child));
    this.child = child;
    return child;
  }

  private answered(answer: Answer): void {
    const pending = this.pending.get(answer.id);
    if (!pending) return;
    if ("exit" in answer) {
      this.pending.delete(answer.id);
      pending.exited({ code: answer.exit });
      this.holdOpen();
    } else {
      pending.started?.(answer);
      pending.started = null;
      if (!("pid" in answer)) {
        this.pending.delete(answer.id);
        this.holdOpen();
      }
    }
  }

  /** The spawner is gone while this server lives (killed, crashed): what it followed is told so, and the next request starts another. */
  private ended(child: ChildProcess): void {
    if (this.child !== child) return;
    this.child = null;
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const { started, exited } of pending) {
      started?.({ id: 0, error: "the worker spawner ended before it started the worker" });
      exited(null);
    }
  }

  private holdOpen(): void {
    const child = this.child;
    if (!child) return;
    if (this.pending.size > 0) {
      child.ref();
      child.channel?.ref();
    } else {
      child.unref();
      child.channel?.unref();
    }
  }
}
