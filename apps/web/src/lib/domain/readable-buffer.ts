import { READABLE_MAX_TEXT, readableText, type ReadableEvent, stripAnsi } from "@corral/shared";
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
  /** An answer is arriving in pieces: the text of its row still growing (the last line unless empty). */
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

/**
 * A worker's text without its escape sequences: the view colours lines by what they are, and an
 * answer or a tool's output holding `ESC[2m· permission allowed…` must not look like Corral's own note.
 */
const plain = (text: string) => stripAnsi(text).replaceAll("\u001b", "");

function lineOf(event: ReadableEvent): OutputLine {
  if (event.type === "output") return { stream: event.stream, text: plain(event.text) };
  const text = plain(readableText(event));
  const code = event.type === "tool_result" ? (event.ok ? "32" : "31") : colours[event.type];
  return { stream: "out", text: code ? paint(code, text) : text };
}

/**
 * Splits a row longer than READABLE_MAX_TEXT into rows of that length (never between the two
 * halves of a character outside the BMP): an answer without newlines stays whole and searchable,
 * and no row grows without bound.
 */
export function rowsOf(text: string): string[] {
  if (text.length <= READABLE_MAX_TEXT) return [text];
  const rows: string[] = [];
  for (let at = 0; at < text.length; ) {
    let end = Math.min(text.length, at + READABLE_MAX_TEXT);
    const code = text.charCodeAt(end);
    if (end < text.length && code >= 0xdc00 && code <= 0xdfff) end--;
    rows.push(text.slice(at, end));
    at = end;
  }
  return rows;
}

const answerRow = (text: string): OutputLine => ({ stream: "out", text: plain(text.replace(/\r$/, "")) });

/**
 * Adds a piece of a streamed answer: each newline ends a row, and the row after the last one is
 * still growing. `open` is that row's text so far (its row is the last of `lines` unless empty);
 * the new open row is returned.
 */
function addAnswerPiece(lines: OutputLine[], open: string, piece: string): string {
  if (open) lines.pop();
  const parts = (open + piece).split("\n");
  const growing = rowsOf(parts.pop() ?? "");
  const rest = growing.pop() ?? "";
  for (const row of [...parts.flatMap(rowsOf), ...growing]) lines.push(answerRow(row));
  if (rest) lines.push(answerRow(rest));
  return rest;
}

/**
 * Adds a page of events read from `from` up to `next`. A page from an older cursor (two reads
 * racing) is ignored, so no line appears twice. An answer reads as its own lines, however long:
 * its streamed pieces continue the row they belong to.
 */
export function appendReadable(buffer: ReadableBuffer, events: ReadableEvent[], from: number, next: number, complete: boolean): ReadableBuffer {
  if (from !== buffer.cursor) return buffer;
  if (!events.length) return { ...buffer, cursor: next, complete };
  const lines = buffer.lines.slice();
  let answer = buffer.answer;
  for (const event of events) {
    if (event.type === "text" && event.delta === true) {
      answer = addAnswerPiece(lines, answer ?? "", event.text);
      continue;
    }
    answer = null;
    if (event.type === "text") for (const row of event.text.split("\n").flatMap(rowsOf)) lines.push(answerRow(row));
    else lines.push(lineOf(event));
  }
  const excess = Math.max(0, lines.length - MAX_LINES);
  return { lines: excess ? lines.slice(excess) : lines, cursor: next, complete, dropped: buffer.dropped + excess, answer };
}

/**
 * What a view that shows an output as text (Compare's columns) shows of it: its lines as the
 * Readable view reads them (or as printed, for a raw buffer), the blank ones at the end left out.
 */
export function shownText(buffer: { lines: OutputLine[] } | undefined): string {
  return (buffer?.lines ?? [])
    .map((l) => l.text)
    .join("\n")
    .trimEnd();
}
