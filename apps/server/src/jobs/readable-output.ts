import type { OutputStream, ReadableEvent } from "@corral/shared";
import { readableLine } from "../agents/readable.js";
import type { AgentKindModule } from "../agents/types.js";
import { readOutput } from "./output-log.js";

/** A line longer than this is read in pieces, so an endless line cannot fill memory. */
export const MAX_READABLE_LINE = 1024 * 1024;

/** Lines of each stream not yet ended by a newline. */
class OpenLines {
  private open: Record<OutputStream, string> = { out: "", err: "", sys: "" };

  constructor(private readonly module: AgentKindModule | undefined) {}

  get empty(): boolean {
    return !this.open.out && !this.open.err && !this.open.sys;
  }

  /** Events of the lines this text ends; what follows the last newline waits for the rest. */
  push(stream: OutputStream, text: string): ReadableEvent[] {
    const parts = (this.open[stream] + text).split("\n");
    let rest = parts.pop() ?? "";
    const events = parts.flatMap((line) => this.line(stream, line));
    if (rest.length > MAX_READABLE_LINE) {
      events.push(...this.line(stream, rest));
      rest = "";
    }
    this.open[stream] = rest;
    return events;
  }

  /** The output has ended: what is left is a line of its own. */
  flush(): ReadableEvent[] {
    const streams: OutputStream[] = ["out", "err", "sys"];
    return streams.flatMap((stream) => {
      const rest = this.open[stream];
      this.open[stream] = "";
      return rest ? this.line(stream, rest) : [];
    });
  }

  private line(stream: OutputStream, line: string): ReadableEvent[] {
    const text = line.replace(/\r$/, "");
    // Only stdout carries a worker's events; stderr and Corral's notes read as printed.
    return stream === "out" ? readableLine(this.module, text) : [{ type: "output", stream, text }];
  }
}

/**
 * Readable events of a job's output log from `cursor`, about `limit` bytes of it. The cursor
 * returned is a record boundary where no line is open, so each page reads whole lines and the
 * next page starts where this one stopped: no event is lost or sent twice. A line still being
 * printed waits for its end (or, once the job has `ended`, for the end of the log).
 */
export function readReadable(file: string, module: AgentKindModule | undefined, cursor: number, limit: number, ended: boolean) {
  for (let want = limit; ; want *= 2) {
    const page = readOutput(file, cursor, want, false);
    const lines = new OpenLines(module);
    const events: ReadableEvent[] = [];
    let held: ReadableEvent[] = [];
    let safe = cursor;
    for (const chunk of page.chunks) {
      held.push(...lines.push(chunk.stream, chunk.text));
      if (lines.empty) {
        events.push(...held);
        held = [];
        safe = chunk.cursor;
      }
    }
    const atEnd = page.cursor >= page.size;
    if (atEnd && ended) return { events: [...events, ...held, ...lines.flush()], cursor: page.cursor, complete: true };
    // An open line ends further on: read on, unless this page already has whole lines to give.
    if (safe > cursor || atEnd) return { events, cursor: safe, complete: false };
  }
}
