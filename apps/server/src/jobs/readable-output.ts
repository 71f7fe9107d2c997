import { type OutputStream, type ReadableEvent, readableText, stripAnsi } from "@corral/shared";
import { cut, readableLine } from "../agents/readable.js";
import type { AgentKindModule } from "../agents/types.js";
import { readOutput, readTail, startsLine } from "./output-log.js";

/** A line longer than this is read in pieces, so an endless line cannot fill memory. */
export const MAX_READABLE_LINE = 1024 * 1024;

/**
 * A page stops at the first whole-line boundary past this many events: a megabyte of short lines
 * is half a million events, and an answer that size is tens of megabytes of JSON.
 */
export const MAX_READABLE_EVENTS = 20_000;

/**
 * Appends `items` one by one: `target.push(...items)` passes every item as an argument, and an
 * output of many short lines has more of them than the call stack holds.
 */
function append<T>(target: T[], items: readonly T[]): void {
  for (const item of items) target.push(item);
}

/** Lines of each stream not yet ended by a newline. */
class OpenLines {
  private open: Record<OutputStream, string> = { out: "", err: "", sys: "" };
  /** The stream's open line was cut (too long): its pieces read as printed, never as events. */
  private cutting: Record<OutputStream, boolean> = { out: false, err: false, sys: false };

  /** `inLine`: stdout's text before this reader's start does not end a line (this one begins in a cut line's pieces). */
  constructor(
    private readonly module: AgentKindModule | undefined,
    inLine = false,
  ) {
    this.cutting.out = inLine;
  }

  get empty(): boolean {
    return !this.open.out && !this.open.err && !this.open.sys;
  }

  /** Events of the lines this text ends; what follows the last newline waits for the rest. */
  push(stream: OutputStream, text: string): ReadableEvent[] {
    const parts = (this.open[stream] + text).split("\n");
    let rest = parts.pop() ?? "";
    const events = parts.flatMap((line, i) => (i === 0 && this.cutting[stream] ? this.piece(stream, line) : this.line(stream, line)));
    if (parts.length > 0) this.cutting[stream] = false;
    if (rest.length > MAX_READABLE_LINE) {
      append(events, this.piece(stream, rest));
      this.cutting[stream] = true;
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
      const cut = this.cutting[stream];
      this.open[stream] = "";
      this.cutting[stream] = false;
      return rest ? (cut ? this.piece(stream, rest) : this.line(stream, rest)) : [];
    });
  }

  /**
   * A piece of a line too long to hold, as printed: a worker could align one to look like a whole
   * event (a tool input holding JSON objects at the cut points).
   */
  private piece(stream: OutputStream, text: string): ReadableEvent[] {
    return [{ type: "output", stream, text }];
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
 * printed waits for its end (or, once the job has `ended`, for the end of the log). A page also
 * ends at the first such boundary past MAX_READABLE_EVENTS events, so its answer stays small.
 */
export function readReadable(file: string, module: AgentKindModule | undefined, cursor: number, limit: number, ended: boolean) {
  // A page begins where the last ended, at a line's end or inside a line too long to hold.
  const inLine = !startsLine(file, cursor, "out");
  for (let want = limit; ; want *= 2) {
    const page = readOutput(file, cursor, want, false);
    const lines = new OpenLines(module, inLine);
    const events: ReadableEvent[] = [];
    let held: ReadableEvent[] = [];
    let safe = cursor;
    let full = false;
    for (const chunk of page.chunks) {
      append(held, lines.push(chunk.stream, chunk.text));
      if (lines.empty) {
        append(events, held);
        held = [];
        safe = chunk.cursor;
        full = events.length >= MAX_READABLE_EVENTS;
        if (full) break;
      }
    }
    if (full) return { events, cursor: safe, complete: ended && safe >= page.size };
    const atEnd = page.cursor >= page.size;
    if (atEnd && ended) {
      append(events, held);
      append(events, lines.flush());
      return { events, cursor: page.cursor, complete: true };
    }
    // An open line ends further on: read on, unless this page already has whole lines to give.
    if (safe > cursor || atEnd) return { events, cursor: safe, complete: false };
  }
}

/** How much of the output's end is read for its latest line; a longer last line reads as the one before. */
const TAIL_BYTES = 64 * 1024;
/** The latest line is one line of a card; its tooltip shows up to this much. */
const MAX_TAIL_LINE = 400;

/**
 * The latest line of a job's Readable view, on one line: what a running job is doing now. A
 * line still being printed waits for its end, as in readReadable, and the tail's first stdout
 * line is skipped unless the tail is the whole output (it may begin inside a line), so a JSON
 * event never shows half; stderr and Corral's notes read as printed anyway.
 */
export function lastReadableLine(file: string, module: AgentKindModule | undefined, ended: boolean): string {
  const chunks = readTail(file, TAIL_BYTES);
  let inLine = chunks.reduce((n, c) => n + Buffer.byteLength(c.text), 0) >= TAIL_BYTES;
  const lines = new OpenLines(module);
  const events: ReadableEvent[] = [];
  for (const { stream, text } of chunks) {
    const from = inLine && stream === "out" ? text.indexOf("\n") + 1 : 0;
    if (stream === "out") {
      if (inLine && from === 0) continue;
      inLine = false;
    }
    append(events, lines.push(stream, text.slice(from)));
  }
  if (ended) append(events, lines.flush());
  return lastLineOf(events);
}

/** The last non-blank line the events read as; an answer's streamed pieces are one text. */
function lastLineOf(events: ReadableEvent[]): string {
  const texts: string[] = [];
  let answering = false;
  for (const ev of events) {
    const delta = ev.type === "text" && ev.delta === true;
    if (delta && answering) texts[texts.length - 1] += ev.text;
    else texts.push(readableText(ev));
    answering = delta;
  }
  for (let i = texts.length - 1; i >= 0; i--) {
    const line = stripAnsi(texts[i] ?? "")
      .split(/\r?\n|\r/)
      .findLast((l) => l.trim());
    if (line) return cut(line, MAX_TAIL_LINE, true);
  }
  return "";
}
