import { setTimeout as sleep } from "node:timers/promises";
import { type Job, type ReadablePage, readableText, type ReadableEvent, stripAnsi } from "@corral/shared";
import { request } from "./client.js";
import { CliError, EXIT } from "./exit-codes.js";
import { followJob, RECONNECT_FOR_MS, RETRY_MS } from "./follow.js";
import type { Target } from "./settings.js";

/**
 * A worker's text as a terminal shows it safely: colours and cursor moves removed, other control
 * characters made visible (`\x07`), so a worker cannot rewrite the screen or the prompt.
 */
export function terminalText(text: string): string {
  return stripAnsi(text).replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

/** `call`, tried again while the server cannot be reached, as a follower reconnects (a restart, a dropped connection), for up to a minute. */
async function reconnecting<T>(call: () => Promise<T>): Promise<T> {
  const since = Date.now();
  for (let failures = 0; ; failures++) {
    try {
      return await call();
    } catch (err) {
      if (!(err instanceof CliError && err.code === EXIT.unreachable) || Date.now() - since > RECONNECT_FOR_MS) throw err;
      await sleep(RETRY_MS[Math.min(failures, RETRY_MS.length - 1)]);
    }
  }
}

/**
 * Writes readable events as lines, the panel's Readable view in a terminal: streamed pieces of the
 * answer (`delta`) run on in one line, every other event starts a line of its own.
 */
export class ReadablePrinter {
  private midLine = false;

  constructor(private readonly write: (text: string) => void) {}

  print(event: ReadableEvent): void {
    if (event.type === "text" && event.delta) {
      const text = terminalText(event.text);
      this.write(text);
      this.midLine = text.length > 0 && !text.endsWith("\n");
      return;
    }
    this.endLine();
    const line = terminalText(readableText(event));
    this.write(line.endsWith("\n") ? line : `${line}\n`);
  }

  /** Ends a line left open by streamed text. */
  endLine(): void {
    if (this.midLine) this.write("\n");
    this.midLine = false;
  }
}

/**
 * Prints a job's output as its agent kind reads it, from the start: what is stored so far
 * (`storedOnly`), or following it to the job's end. Each piece of output the WebSocket announces
 * triggers a read of the readable pages from where the last one stopped; at the end they are read
 * to the last. Resolves with the job (ended, or as it was with `storedOnly`); `signal` stops it
 * (StoppedWaiting, as followJob).
 */
export async function followReadable(
  target: Target,
  jobId: string,
  printer: ReadablePrinter,
  storedOnly: boolean,
  signal?: AbortSignal,
): Promise<Job> {
  let cursor = 0;
  const drain = async () => {
    for (;;) {
      const page = await reconnecting(() => request<ReadablePage>(target, "GET", `/api/jobs/${encodeURIComponent(jobId)}/readable?cursor=${cursor}`));
      if (signal?.aborted) return;
      for (const event of page.events) printer.print(event);
      const moved = page.cursor !== cursor;
      cursor = page.cursor;
      if (page.complete || !moved) return;
    }
  };
  // One read at a time; output announced while one runs asks for one more after it, not one each.
  let running: Promise<void> | null = null;
  let again = false;
  let failed: unknown = null;
  const readOn = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await drain();
        } while (again);
      } catch (err) {
        failed ??= err;
      } finally {
        running = null;
      }
    })();
    return running;
  };
  let job: Job;
  try {
    job = await followJob(target, jobId, () => void readOn(), storedOnly, signal);
  } catch (err) {
    printer.endLine();
    throw err;
  }
  await readOn();
  if (failed) throw failed;
  printer.endLine();
  return job;
}
