import { READABLE_MAX_TEXT, readableText, type ReadableEvent } from "@corral/shared";
import type { OutputLine } from "./output-buffer.js";

/**
 * What the panel holds of a job's Readable view: lines made of the events the server read from
 * the output (the panel never parses a worker's format), and where the next read starts.
 */
export interface ReadableBuffer {
  lines: OutputLine[];
  cursor: number;
  complete: boolean;
  /** Lines dropped from the front to keep the browser's memory bounded. */
  dropped: number;
  /** The last line is an answer still arriving in pieces: its text so far, untrimmed. */
  answer: string | null;
}

export const emptyReadable = (): ReadableBuffer => ({ lines: [], cursor: 0, complete: false, dropped: 0, answer: null });

const MAX_LINES = 100_000;

const esc = "\u001b[";
const paint = (code: string, text: string) => `${esc}${code}m${text}${esc}0m`;

/** Colours by what the event is, as ANSI codes, so the view renders and searches it like any log line. */
const colours: Partial<Record<ReadableEvent["type"], string>> = {
  session: "2",
  note: "2",
  prompt: "2",
  thinking: "2;3",
  tool_call: "36",
  usage: "2",
  error: "31",
};

function lineOf(event: ReadableEvent): OutputLine {
  if (event.type === "output") return { stream: event.stream, text: event.text };
  const text = readableText(event);
  const code = event.type === "tool_result" ? (event.ok ? "32" : "31") : colours[event.type];
  return { stream: "out", text: code ? paint(code, text) : text };
}

/** Bounds a growing answer without trimming it: its pieces may end or start with spaces. */
const bound = (text: string) => (text.length > READABLE_MAX_TEXT ? `${text.slice(0, READABLE_MAX_TEXT - 1)}…` : text);

/**
 * Adds a page of events read from `from` up to `next`. A page from an older cursor (two reads
 * racing) is ignored, so no line appears twice. Consecutive answer pieces become one line.
 */
export function appendReadable(buffer: ReadableBuffer, events: ReadableEvent[], from: number, next: number, complete: boolean): ReadableBuffer {
  if (from !== buffer.cursor) return buffer;
  if (!events.length) return { ...buffer, cursor: next, complete };
  const lines = buffer.lines.slice();
  let answer = buffer.answer;
  for (const event of events) {
    if (event.type !== "text" || event.delta !== true) {
      answer = null;
      lines.push(lineOf(event));
      continue;
    }
    // An answer streamed line by line ends with a newline that would show as an empty row.
    if (answer === null) lines.push({ stream: "out", text: "" });
    answer = bound((answer ?? "") + event.text);
    lines[lines.length - 1] = { stream: "out", text: answer.trimEnd() };
  }
  const excess = Math.max(0, lines.length - MAX_LINES);
  return { lines: excess ? lines.slice(excess) : lines, cursor: next, complete, dropped: buffer.dropped + excess, answer };
}
