// Regular expressions that a user or a model wrote never run on the event loop: V8's engine
// backtracks, and `^(a+)+$` over 34 `a`s takes minutes, during which no request, cancel or
// timeout would run. They run in a worker thread instead, which is terminated at a deadline (or
// when the caller gives up), so the worst a pattern costs is its deadline on another thread.
import { Worker } from "node:worker_threads";
import { Refusal } from "./confined-files.js";

/**
 * The worker's whole program, inline so it needs no file of its own in the build. It compiles a
 * pattern when it changes and answers each text with the indices of the lines that match (at
 * most `max`).
 */
const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
let compiled = null;
parentPort.on("message", ({ source, flags, text, max, whole }) => {
  if (!compiled || compiled.source !== source || compiled.flags !== flags) compiled = { source, flags, re: new RegExp(source, flags) };
  const re = compiled.re;
  const lines = whole ? [text] : text.split("\\n");
  const hits = [];
  for (let i = 0; i < lines.length && hits.length < max; i++) {
    re.lastIndex = 0;
    if (re.test(lines[i])) hits.push(i);
  }
  parentPort.postMessage(hits);
});
`;

/** A worker's heap: a text of a few MiB and its lines fit; a pattern cannot take the machine's memory. */
const RESOURCE_LIMITS = { maxOldGenerationSizeMb: 96, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 };

/**
 * Workers kept for the next search, so a grep does not pay for starting a thread: only ever one
 * that answered in time, never one that was stopped mid-match.
 */
const idle: Worker[] = [];
const MAX_IDLE = 2;
/**
 * Threads alive at most, busy, idle or still exiting: each may hold its heap limit, and greps from
 * many jobs at once would otherwise start a thread each. A matcher beyond it waits for one.
 */
export const MAX_MATCHER_THREADS = 4;
let live = 0;
let timedOut = 0;
/** Matchers waiting for a thread, woken in turn when one is handed back or has exited. */
const waiting: (() => void)[] = [];
const wakeNext = () => waiting.shift()?.();

/** Pattern threads alive: matching (`busy`) or kept for the next search (`idle`); how many were stopped at their deadline; matchers waiting for a thread. */
export const matcherThreads = () => ({ busy: live - idle.length, idle: idle.length, timedOut, waiting: waiting.length });

function spawnWorker(): Worker {
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    resourceLimits: RESOURCE_LIMITS,
    // The worker needs nothing of the server's environment.
    env: {},
  });
  // An idle worker does not keep the process alive; one in use is awaited anyway.
  worker.unref();
  // An error ends the thread ('exit' follows); the matcher using it, if any, has its own listener.
  worker.on("error", () => {});
  live++;
  worker.once("exit", () => {
    live--;
    const at = idle.indexOf(worker);
    if (at >= 0) idle.splice(at, 1);
    wakeNext();
  });
  return worker;
}

/**
 * A pattern's length, at most: it is copied to the thread with every file a grep matches, and a
 * model's tool call may carry megabytes.
 */
export const MAX_PATTERN_CHARS = 10_000;

/** Compiles `source` here first, so a syntax error is the caller's answer and not a worker's crash. */
export function checkPattern(source: string, flags = ""): void {
  if (source.length > MAX_PATTERN_CHARS) throw new Refusal(`pattern is longer than ${MAX_PATTERN_CHARS} characters; search for a shorter one`);
  try {
    new RegExp(source, flags);
  } catch (err) {
    throw new Refusal(`pattern is not a valid regular expression: ${(err as Error).message}`);
  }
}

export interface LineMatcherOptions {
  /** All matching this matcher does together may take this long. */
  deadlineMs: number;
  /** Aborting stops the worker at once (a cancelled job). */
  signal?: AbortSignal;
  flags?: string;
}

/**
 * Matches lines against one pattern in a worker thread with a deadline over all its calls. Once
 * the deadline passes (or the signal aborts) the worker is terminated and every call rejects.
 * close() ends the worker; a matcher that was never used never starts one.
 */
export class LineMatcher {
  private worker: Worker | null = null;
  private spentMs = 0;
  private failure: Error | null = null;
  /** Wakes this matcher while it waits for a thread (it failed meanwhile: aborted). */
  private wake: (() => void) | null = null;
  private readonly onAbort = () => this.fail(abortError(this.opts.signal));
  private readonly onError = (err: Error) => this.fail(new Error(`the pattern could not be matched: ${err.message}`));

  constructor(
    private readonly source: string,
    private readonly opts: LineMatcherOptions,
  ) {
    checkPattern(source, opts.flags);
    opts.signal?.addEventListener("abort", this.onAbort, { once: true });
  }

  /** Whether `text` as a whole matches. */
  async test(text: string): Promise<boolean> {
    return (await this.run(text, 1, true)).length > 0;
  }

  /** Indices of the lines of `text` (split at `\n`) that match, at most `max` of them. */
  matchLines(text: string, max: number): Promise<number[]> {
    return this.run(text, max, false);
  }

  private async run(text: string, max: number, whole: boolean): Promise<number[]> {
    if (this.opts.signal?.aborted) this.fail(abortError(this.opts.signal));
    if (this.failure) throw this.failure;
    const worker = await this.start();
    const started = performance.now();
    try {
      return await new Promise<number[]>((resolve, reject) => {
        const timer = setTimeout(
          () => {
            timedOut++;
            this.fail(this.tooSlow());
          },
          Math.max(0, this.opts.deadlineMs - this.spentMs),
        );
        const settle = () => {
          clearTimeout(timer);
          worker.off("message", onMessage);
          worker.off("exit", onExit);
        };
        const onMessage = (hits: number[]) => {
          settle();
          resolve(hits);
        };
        const onExit = () => {
          settle();
          reject(this.failure ?? new Error("the pattern's worker stopped"));
        };
        worker.on("message", onMessage);
        worker.on("exit", onExit);
        worker.postMessage({ source: this.source, flags: this.opts.flags ?? "", text, max, whole });
      });
    } finally {
      this.spentMs += performance.now() - started;
    }
  }

  /** Ends this matcher: its worker goes back to the idle ones if it answered everything in time. */
  close(): void {
    this.opts.signal?.removeEventListener("abort", this.onAbort);
    const worker = this.worker;
    if (!worker) return;
    this.worker = null;
    worker.off("error", this.onError);
    if (!this.failure && idle.length < MAX_IDLE) {
      idle.push(worker);
      wakeNext();
    } else void worker.terminate();
  }

  private async start(): Promise<Worker> {
    while (!this.worker) {
      if (this.failure) throw this.failure;
      const free = idle.pop() ?? (live < MAX_MATCHER_THREADS ? spawnWorker() : null);
      if (free) {
        free.on("error", this.onError);
        this.worker = free;
        break;
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        waiting.push(resolve);
      });
      this.wake = null;
    }
    return this.worker;
  }

  private tooSlow(): Refusal {
    const s = Math.round(this.opts.deadlineMs / 100) / 10;
    return new Refusal(
      `the pattern took longer than ${s} s to match; simplify it (nested quantifiers such as (a+)+ can take exponential time) or search fewer files`,
    );
  }

  private fail(err: Error): void {
    this.failure ??= err;
    this.stop();
    const wake = this.wake;
    if (wake) {
      waiting.splice(waiting.indexOf(wake), 1);
      wake();
    }
  }

  private stop(): void {
    // terminate() stops the thread even mid-match; its 'exit' rejects a call still waiting.
    void this.worker?.terminate();
  }
}

function abortError(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new Error("cancelled");
}
