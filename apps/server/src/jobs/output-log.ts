import { closeSync, fstatSync, openSync, writeSync } from "node:fs";
import type { OutputChunk, OutputStream } from "@corral/shared";
import { PRIVATE_FILE_MODE } from "../lib/private-files.js";
import { readAt } from "../lib/regular-file.js";

/**
 * A job's output: one JSON record per line, `{"s":stream,"d":text,"o":rawOffset,"a":attempt}`. A
 * cursor is a byte offset at a record boundary, so any reader can resume exactly where it stopped.
 * `o` is how far attempt `a`'s raw capture file of that stream had been read, so capture can
 * resume after a restart.
 */
interface LogRecord {
  s: OutputStream;
  d: string;
  o?: number;
  a?: number;
}

/** Where a piece of captured output came from. */
export interface RawPosition {
  offset: number;
  attempt: number;
}

export class OutputLog {
  private fd: number;
  private bytes: number;

  constructor(readonly file: string) {
    this.fd = openSync(file, "a", PRIVATE_FILE_MODE);
    this.bytes = fstatSync(this.fd).size;
  }

  /** Appends synchronously, so a reader told about this chunk can already read it. Returns the new end. */
  append(stream: OutputStream, text: string, raw?: RawPosition): number {
    const record: LogRecord = raw ? { s: stream, d: text, o: raw.offset, a: raw.attempt } : { s: stream, d: text };
    const line = Buffer.from(`${JSON.stringify(record)}\n`);
    writeSync(this.fd, line);
    this.bytes += line.length;
    return this.bytes;
  }

  get size(): number {
    return this.bytes;
  }

  close(): void {
    closeSync(this.fd);
  }
}

/**
 * Text cut after its last newline. Written as two records, a record ends where a line ends
 * whenever it can, so a reader of whole lines (the Readable view) can stop between records.
 */
export function atLastLineEnd(text: string): string[] {
  const end = text.lastIndexOf("\n") + 1;
  return end > 0 && end < text.length ? [text.slice(0, end), text.slice(end)] : [text];
}

export class CursorError extends Error {}

/** A chunk with the cursor right after it, so a reader can resume after any chunk it delivered. */
export type CursorChunk = OutputChunk & { cursor: number };

/** Records read from a cursor: the cursor after the last, and the log's size when read. */
export interface OutputRecords {
  chunks: CursorChunk[];
  cursor: number;
  size: number;
}

/**
 * Whole records in `buf`, which starts at cursor `base`; each chunk carries the cursor after it.
 * Consecutive pieces of one stream travel as one chunk unless `join` is false.
 */
function parseRecords(file: string, buf: Buffer, base: number, join = true): CursorChunk[] {
  const chunks: CursorChunk[] = [];
  let start = 0;
  for (let nl = buf.indexOf(0x0a); nl >= 0; nl = buf.indexOf(0x0a, start)) {
    const record = parseRecord(file, buf.toString("utf8", start, nl), base + start);
    start = nl + 1;
    const last = chunks.at(-1);
    if (join && last && last.stream === record.s) {
      last.text += record.d;
      last.cursor = base + start;
    } else chunks.push({ stream: record.s, text: record.d, cursor: base + start });
  }
  return chunks;
}

/** A damaged log (a disk full mid-write, a hand edit) says where, instead of a bare JSON error. */
function parseRecord(file: string, line: string, at: number): LogRecord {
  try {
    return JSON.parse(line) as LogRecord;
  } catch {
    throw new Error(`the output log ${file} is damaged near byte ${at}: a record there is not JSON`);
  }
}

/** Reads `length` bytes at `position` (fewer at the end of the file). */
type ReadAt = (position: number, length: number) => Buffer;

/**
 * Runs `fn` on the log's bytes. A log that does not exist yet (the job is queued, or was
 * cancelled before it started) reads as empty: every reader works in every job state.
 */
function withFile<T>(file: string, fn: (read: ReadAt, size: number) => T): T {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return fn(() => Buffer.alloc(0), 0);
    throw err;
  }
  try {
    return fn((position, length) => readAt(fd, position, length), fstatSync(fd).size);
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads whole records from `cursor`, about `limit` bytes of them (at least one record); with
 * `join` false each record is a chunk of its own, so a reader may stop after any of them.
 */
export function readOutput(file: string, cursor: number, limit: number, join = true): OutputRecords {
  return withFile(file, (read, size) => {
    if (cursor > size) throw new CursorError(`cursor ${cursor} is past the end of the output (${size} bytes)`);
    if (cursor > 0 && read(cursor - 1, 1)[0] !== 0x0a) {
      throw new CursorError(`cursor ${cursor} is not a record boundary; use a cursor this server returned`);
    }
    let length = Math.min(limit, size - cursor);
    for (;;) {
      const buf = read(cursor, length);
      const end = buf.lastIndexOf(0x0a);
      if (end >= 0) return { chunks: parseRecords(file, buf.subarray(0, end + 1), cursor, join), cursor: cursor + end + 1, size };
      if (cursor + length >= size) return { chunks: [], cursor, size };
      length = Math.min(length * 2, size - cursor);
    }
  });
}

/** The last records: about `bytes` of them, and at least the last whole one. */
export function readTail(file: string, bytes: number): CursorChunk[] {
  return withFile(file, (read, size) => {
    for (let want = bytes; ; want *= 2) {
      const start = Math.max(0, size - want);
      const buf = read(start, size - start);
      if (start === 0) return parseRecords(file, buf, 0);
      // Skip the partial record the window begins in; widen it if nothing whole is left.
      const first = buf.indexOf(0x0a) + 1;
      if (first > 0 && first < buf.length) return parseRecords(file, buf.subarray(first), start + first);
    }
  });
}

/** How far each raw capture file of an attempt had been read when the log was last written. */
export function lastRawOffsets(file: string, attempt: number): { out: number; err: number } {
  const offsets = { out: 0, err: 0 };
  withFile(file, (read, size) => {
    // Scan backwards in windows until both streams' last offsets are found.
    let end = size;
    let found = 0;
    while (end > 0 && found < 2) {
      const start = Math.max(0, end - 256 * 1024);
      const buf = read(start, end - start);
      const from = start > 0 ? buf.indexOf(0x0a) + 1 : 0;
      const lines = buf.subarray(from).toString("utf8").split("\n").reverse();
      for (const line of lines) {
        if (!line) continue;
        const record = parseRecord(file, line, start);
        if (record.o === undefined || record.s === "sys") continue;
        // Older attempts wrote other files: nothing before this point is ours.
        if ((record.a ?? 1) < attempt) return;
        if (offsets[record.s] === 0 && record.o > 0) {
          offsets[record.s] = record.o;
          found++;
        }
      }
      if (start === 0 || from === 0) break;
      end = start + from;
    }
  });
  return offsets;
}

/** Plain text of the last records, for `_done` and error messages. */
export function tailText(file: string, maxChars: number, streams: OutputStream[] = ["out", "err", "sys"]): string {
  const text = readTail(file, maxChars * 4 + 1024)
    .filter((c) => streams.includes(c.stream))
    .map((c) => c.text)
    .join("");
  return text.length > maxChars ? `…${text.slice(-maxChars)}` : text;
}
