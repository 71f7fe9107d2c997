import type { InvocationRecord, OutputStream } from "@corral/shared";
import { diskFull, diskFullMessage } from "../lib/disk-space.js";
import type { CliAdapter, InProcessAdapter, Invocation, JobSpec, UsageReport, WorkerResult } from "../agents/types.js";
import { Capture } from "./capture.js";
import { atLastLineEnd, lastRawOffsets, type OutputLog } from "./output-log.js";
import { setTimeout as sleep } from "node:timers/promises";
import { commandProcesses, groupAlive, isWorkerGroup, killGroup, processAlive } from "./process-group.js";
import type { Spawner } from "./spawner.js";
import { reattachWorker, spawnWorker, type JobDataPaths, type WorkerProcess } from "./worker-process.js";

export interface ExecutionEnd {
  exitCode: number | null;
  result: WorkerResult;
  /** Why it failed, when the worker itself said so (in-process workers), or its output could not be kept. */
  error?: string;
  /** When the worker ended, when it is known better than the moment this is read (its exit file's time). */
  endedAt?: number;
}

/** One running worker, whatever kind: the job driver drives them all the same way. */
export interface Execution {
  pid: number | null;
  pidStart: number | null;
  invocation: InvocationRecord | null;
  /** Resolves once the worker has ended and all its output is in the log. */
  ended: Promise<ExecutionEnd>;
  /** Kills or aborts it; resolves when nothing of it is left. */
  stop(): Promise<void>;
  /** Stops following it and leaves it running (the server is shutting down). */
  detach(): void;
  /**
   * Lets an in-process worker begin, once its job is stored as running: it has no process to
   * start first, and its output must not precede that state. A process has begun on its own.
   */
  begin?(): void;
}

export interface ExecutionListeners {
  /** New output, already in the log: UTF-8, whole characters. */
  chunk(stream: OutputStream, data: Buffer, cursor: number): void;
  usage(report: UsageReport): void;
  /** The worker's group outlived the grace period after SIGTERM and was sent SIGKILL. */
  killed(): void;
}

interface CliContext {
  adapter: CliAdapter;
  spec: JobSpec;
  files: JobDataPaths;
  log: OutputLog;
  listeners: ExecutionListeners;
  killGraceMs: number;
}

function followProcess(worker: WorkerProcess, invocation: InvocationRecord, ctx: CliContext, offsets: { out: number; err: number }): Execution {
  const parser = ctx.adapter.createParser(ctx.spec);
  const onText = (text: string, stream: OutputStream) => {
    const usage = parser.push(text, stream);
    if (usage) ctx.listeners.usage(usage);
  };
  // A worker whose output can no longer be kept (its disk is full) is stopped: it would run on unrecorded.
  const full = () => void killGroup(worker.pid, ctx.killGraceMs, ctx.listeners.killed);
  const raw = { out: ctx.files.out, err: ctx.files.err };
  const capture = new Capture(ctx.log, raw, offsets, ctx.listeners.chunk, onText, ctx.files.attempt, full);
  capture.start();
  let detached = false;
  const ended = worker.ended.then(async ({ code, at }): Promise<ExecutionEnd> => {
    // Descendants left behind by a worker that exited are part of its job: none outlives it, and
    // the job ends once they are gone.
    const leftovers = !detached && groupAlive(worker.pid);
    if (leftovers) await killGroup(worker.pid, ctx.killGraceMs, ctx.listeners.killed);
    if (!detached) await capture.finish();
    const lost = capture.lostToFullDisk ? { error: outputLost(ctx) } : {};
    return { exitCode: code, result: parser.finish(), ...(at !== undefined && !leftovers && { endedAt: at }), ...lost };
  });
  return {
    pid: worker.pid,
    pidStart: worker.pidStart,
    invocation,
    ended,
    async stop() {
      const first = ctx.adapter.stopFirst;
      if (first) await signalWorkerFirst(worker.pid, first);
      await killGroup(worker.pid, ctx.killGraceMs, ctx.listeners.killed);
      await ended;
    },
    detach() {
      detached = true;
      capture.detach();
    },
  };
}

/**
 * The worker's own process alone (the command its `sh` wrapper runs, worker-process.ts, inside
 * its sandbox if it has one) gets `signal`; resolves once it has exited or `graceMs` passed.
 */
async function signalWorkerFirst(pid: number, { signal, graceMs }: { signal: NodeJS.Signals; graceMs: number }): Promise<void> {
  if (!isWorkerGroup(pid)) return;
  const targets = commandProcesses(pid);
  for (const target of targets) {
    try {
      process.kill(target, signal);
    } catch {
      // Gone already.
    }
  }
  const deadline = Date.now() + graceMs;
  while (targets.some(processAlive) && Date.now() < deadline) await sleep(20);
}

export async function startCli(invocation: Invocation, env: Record<string, string>, ctx: CliContext, spawner: Spawner): Promise<Execution> {
  const worker = await spawnWorker(invocation, env, ctx.files, spawner);
  const record = { command: invocation.command, args: invocation.args, cwd: invocation.cwd };
  return followProcess(worker, record, ctx, { out: 0, err: 0 });
}

/** Picks a worker up again after a restart, from where its output was last copied. */
export function reattachCli(pid: number, pidStart: number | null, invocation: InvocationRecord, ctx: CliContext): Execution {
  const worker = reattachWorker(pid, pidStart, ctx.files);
  return followProcess(worker, invocation, ctx, lastRawOffsets(ctx.files.log, ctx.files.attempt));
}

/** The job's error when its disk filled up: what was kept, and where to make room. */
function outputLost(ctx: { log: OutputLog; files: JobDataPaths }): string {
  return `${diskFullMessage(ctx.files.dataDir)}. The job was stopped there: its output is kept as far as it was written (${ctx.log.textBytes} bytes); run it again once there is room`;
}

export function startInProcess(
  adapter: InProcessAdapter,
  spec: JobSpec,
  log: OutputLog,
  listeners: ExecutionListeners,
  files: JobDataPaths,
): Execution {
  const controller = new AbortController();
  let lost: string | null = null;
  const io = {
    write(stream: OutputStream, text: string) {
      if (!text || lost) return;
      try {
        for (const data of atLastLineEnd(text).map((piece) => Buffer.from(piece))) listeners.chunk(stream, data, log.append(stream, data));
      } catch (err) {
        if (!diskFull(err)) throw err;
        // As a CLI worker is stopped when its output cannot be kept.
        lost = outputLost({ log, files });
        controller.abort();
      }
    },
    usage: listeners.usage,
    signal: controller.signal,
  };
  let begin: (run: boolean) => void = () => {};
  const begun = new Promise<boolean>((resolve) => (begin = resolve));
  const ended: Promise<ExecutionEnd> = begun.then((run) =>
    run
      ? adapter.run(spec, io).then(
          (result) => (lost ? { exitCode: null, result, error: lost } : { exitCode: 0, result }),
          (err: unknown) => ({ exitCode: null, result: {}, error: lost ?? (err instanceof Error ? err.message : String(err)) }),
        )
      : { exitCode: null, result: {}, error: "stopped before it began" },
  );
  return {
    pid: null,
    pidStart: null,
    invocation: null,
    ended,
    begin: () => begin(true),
    async stop() {
      controller.abort();
      begin(false);
      await ended;
    },
    detach() {
      controller.abort();
      begin(false);
    },
  };
}
