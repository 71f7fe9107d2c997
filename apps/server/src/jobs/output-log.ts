import { closeSync, fstatSync, ftruncateSync, openSync, readSync, statSync, writeSync } from "node:fs";
import type { OutputChunk, OutputStream } from "@corral/shared";
import { PRIVATE_FILE_MODE } from "../lib/private-files.js";
import { readAt } from "../lib/regular-file.js";

/**
 * A job's output is two files. The data file holds the text as printed (UTF-8, every stream one
 * after the other); the log holds one JSON record per line, `{"s":stream,"p":at,"n":bytes,
 * "o":rawOffset,"a":attempt}`, saying whose `n` bytes lie at `p` in the data file. Text is never
 * escaped into JSON, so copying output costs a write, not an encoding. A cursor is a byte offset
 * in the log at a record boundary, so any reader can resume exactly where it stopped. `o` is how
 * far attempt `a`'s raw capture file of that stream had been read, so capture can resume after a
 * restart; `r` is the seq of the runner's chunk (job_output) a record copies, so the copy can. Records
 * of logs written before the data file existed carry their text in `d`.
 */
interface LogRecord {
  s: OutputStream;
  p?: number;
  n?: number;
  d?: string;
  o?: number;
  a?: number;
  r?: number;
}

/** Where a piece of captured output came from. */
export interface RawPosition {
  offset: number;
  attempt: number;
}

/** A runner's chunk copied into the log (RunnerOutputCopy). */
export interface CopiedChunk {
  seq: number;
}

/** The data file beside a log: `output.log` keeps its text in `output.data`. */
export const dataFileOf = (file: string) => file.replace(/(\.log)?$/, ".data");

/** A file's size; 0 when it does not exist yet (without an error built for it: most jobs start so). */
function sizeOf(file: string): number {
  return statSync(file, { throwIfNoEntry: false })?.size ?? 0;
}

/** Regular files take a whole write at once; the loop only guards against a short one. */
function writeAll(fd: number, data: Buffer): void {
  for (let done = 0; done < data.length; ) done += writeSync(fd, data, done);
}

/**
 * The end of the log's last whole record. A server killed while writing a record leaves part of
 * a line behind; the next record must not be glued to it, so the writer cuts it off (its text, if
 * any, is in the data file but referenced by nothing, and capture copies it again).
 */
function wholeRecordsEnd(fd: number, size: number): number {
  const window = 64 * 1024;
  for (let end = size; end > 0; end -= window) {
    const start = Math.max(0, end - window);
    const buf = readAt(fd, start, end - start);
    const nl = buf.lastIndexOf(0x0a);
    if (nl >= 0) return start + nl + 1;
  }
  return 0;
}

export class OutputLog {
  /** Opened with the first text: a job that prints nothing creates neither file. */
  private fds: { log: number; data: number } | null = null;
  private bytes = 0;
  /** Where the next text goes: bytes a crash wrote after the last record are never referenced. */
  private dataBytes: number;

  constructor(readonly file: string) {
    this.dataBytes = sizeOf(dataFileOf(file));
    // A log already there (a job picked up after a restart, a retry) is opened now, to cut it.
    if (sizeOf(file) > 0) this.open();
  }

  private open(): { log: number; data: number } {
    if (this.fds) return this.fds;
    const data = openSync(dataFileOf(this.file), "a", PRIVATE_FILE_MODE);
    this.dataBytes = fstatSync(data).size;
    const log = openSync(this.file, "a+", PRIVATE_FILE_MODE);
    this.fds = { log, data };
    const size = fstatSync(log).size;
    this.bytes = wholeRecordsEnd(log, size);
    if (this.bytes < size) ftruncateSync(log, this.bytes);
    return this.fds;
  }

  /**
   * Appends text as UTF-8 (whole characters): the text first, then its record, both
   * synchronously, so a reader told about this chunk can already read it. Returns the new end.
   */
  append(stream: OutputStream, data: Buffer, from?: RawPosition | CopiedChunk): number {
    const fds = this.open();
    const at = this.dataBytes;
    const origin = !from ? {} : "seq" in from ? { r: from.seq } : { o: from.offset, a: from.attempt };
    const record: LogRecord = { s: stream, p: at, n: data.length, ...origin };
    const line = Buffer.from(`${JSON.stringify(record)}\n`);
    try {
      writeAll(fds.data, data);
      writeAll(fds.log, line);
    } catch (err) {
      // A write cut short (a full disk): both files back to their last whole record, so the log
      // stays readable to its end and the space goes back to the disk (shrinking needs none).
      ftruncateSync(fds.data, at);
      ftruncateSync(fds.log, this.bytes);
      throw err;
    }
    this.dataBytes += data.length;
    this.bytes += line.length;
    return this.bytes;
  }

  /** The end of the log: the cursor after its last record. */
  get size(): number {
    return this.bytes;
  }

  /** Bytes of text in the data file (a job's `outputBytes`). */
  get textBytes(): number {
    return this.dataBytes;
  }

  close(): void {
    if (!this.fds) return;
    closeSync(this.fds.log);
    closeSync(this.fds.data);
    this.fds = null;
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

/** The same as bytes (UTF-8, whole characters), for a reader that sends them on as they are. */
export interface ByteChunk {
  stream: OutputStream;
  data: Buffer;
  cursor: number;
}

/** Records read from a cursor: the cursor after the last, and the log's size when read. */
export interface OutputRecords<C = CursorChunk> {
  chunks: C[];
  cursor: number;
  size: number;
}

/** A record as read: where its text is, and the cursor after it. */
interface Located {
  record: LogRecord;
  cursor: number;
}

/** A damaged log (a disk full mid-write, a hand edit) says where, instead of a bare JSON error. */
function parseRecord(file: string, line: string, at: number): LogRecord {
  try {
    return JSON.parse(line) as LogRecord;
  } catch {
    throw new Error(`the output log ${file} is damaged near byte ${at}: a record there is not JSON`);
  }
}

/** Whole records in `buf`, which starts at cursor `base`. */
function recordsIn(file: string, buf: Buffer, base: number): Located[] {
  const located: Located[] = [];
  let start = 0;
  for (let nl = buf.indexOf(0x0a); nl >= 0; nl = buf.indexOf(0x0a, start)) {
    located.push({ record: parseRecord(file, buf.toString("utf8", start, nl), base + start), cursor: base + nl + 1 });
    start = nl + 1;
  }
  return located;
}

const textBytes = (record: LogRecord) => (record.d === undefined ? (record.n ?? 0) : Buffer.byteLength(record.d));

/** Reads `length` bytes at `position` (fewer at the end of the file). */
type ReadAt = (position: number, length: number) => Buffer;

interface LogFiles {
  read: ReadAt;
  size: number;
  /** The text of records, read from the data file in one piece; one chunk per record, or per run of a stream with `join`. */
  chunks(records: Located[], join: boolean): ByteChunk[];
}

/**
 * Runs `fn` on the log's files. A log that does not exist yet (the job is queued, or was
 * cancelled before it started) reads as empty: every reader works in every job state.
 */
function withFiles<T>(file: string, fn: (log: LogFiles) => T): T {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return fn({ read: () => Buffer.alloc(0), size: 0, chunks: () => [] });
    throw err;
  }
  let dataFd: number | null = null;
  try {
    return fn({
      read: (position, length) => readAt(fd, position, length),
      size: fstatSync(fd).size,
      chunks(records, join) {
        const stored = records.filter(({ record }) => record.d === undefined);
        const from = stored[0]?.record.p ?? 0;
        const to = stored.reduce((end, { record }) => Math.max(end, (record.p ?? 0) + (record.n ?? 0)), from);
        let data = Buffer.alloc(0);
        if (to > from) {
          dataFd ??= openSync(dataFileOf(file), "r");
          data = Buffer.allocUnsafe(to - from);
          const n = readSync(dataFd, data, 0, data.length, from);
          if (n < data.length) throw new Error(`the output data of ${file} ends before byte ${to}: it was cut short`);
        }
        return joinChunks(records, data, from, join);
      },
    });
  } finally {
    closeSync(fd);
    if (dataFd !== null) closeSync(dataFd);
  }
}

/** Each record's text as a slice of `data` (which starts at data offset `from`); consecutive ones of a stream as one chunk with `join`. */
function joinChunks(records: Located[], data: Buffer, from: number, join: boolean): ByteChunk[] {
  const chunks: ByteChunk[] = [];
  /** Where the last chunk starts in `data`, while it is one slice of it. */
  let sliceStart: number | null = null;
  for (const { record, cursor } of records) {
    const stored = record.d === undefined;
    const start = (record.p ?? 0) - from;
    const text = stored ? data.subarray(start, start + (record.n ?? 0)) : Buffer.from(record.d ?? "");
    const last = chunks.at(-1);
    if (!join || !last || last.stream !== record.s) {
      chunks.push({ stream: record.s, data: text, cursor });
      sliceStart = stored ? start : null;
      continue;
    }
    // Back to back in the data file: the joined chunk is still one slice, no copy.
    if (stored && sliceStart !== null && sliceStart + last.data.length === start) last.data = data.subarray(sliceStart, start + text.length);
    else {
      last.data = Buffer.concat([last.data, text]);
      sliceStart = null;
    }
    last.cursor = cursor;
  }
  return chunks;
}

const asText = (chunk: ByteChunk): CursorChunk => ({ stream: chunk.stream, text: chunk.data.toString("utf8"), cursor: chunk.cursor });

/** Log bytes read per step when looking for records (a record is about 60). */
const INDEX_WINDOW = 16 * 1024;

/**
 * Reads whole records from `cursor`, at most `limit` bytes of their text (but at least one
 * record), as bytes; with `join` false each record is a chunk of its own, so a reader may stop after any
 * of them.
 */
export function readOutputBytes(file: string, cursor: number, limit: number, join = true): OutputRecords<ByteChunk> {
  return withFiles(file, (log) => {
    if (cursor > log.size) throw new CursorError(`cursor ${cursor} is past the end of the output (${log.size} bytes)`);
    if (cursor > 0 && log.read(cursor - 1, 1)[0] !== 0x0a) {
      throw new CursorError(`cursor ${cursor} is not a record boundary; use a cursor this server returned`);
    }
    const records: Located[] = [];
    let bytes = 0;
    scan: for (let at = cursor, window = INDEX_WINDOW; at < log.size; ) {
      const buf = log.read(at, Math.min(window, log.size - at));
      // Parsed one by one up to the limit: a page of one big record reads one record, not a window of them.
      let start = 0;
      for (let nl = buf.indexOf(0x0a); nl >= 0; nl = buf.indexOf(0x0a, start)) {
        const record = parseRecord(file, buf.toString("utf8", start, nl), at + start);
        const more = textBytes(record);
        if (records.length > 0 && bytes + more > limit) break scan;
        records.push({ record, cursor: at + nl + 1 });
        bytes += more;
        start = nl + 1;
      }
      if (start === 0) {
        // Only a record still being written, or one longer than the window (a log from before the data file).
        if (at + buf.length >= log.size) break;
        window *= 2;
        continue;
      }
      at += start;
    }
    return { chunks: log.chunks(records, join), cursor: records.at(-1)?.cursor ?? cursor, size: log.size };
  });
}

/** readOutputBytes as text. */
export function readOutput(file: string, cursor: number, limit: number, join = true): OutputRecords {
  const page = readOutputBytes(file, cursor, limit, join);
  return { ...page, chunks: page.chunks.map(asText) };
}

/** The last records: about `bytes` of their text, and at least the last whole one. */
export function readTail(file: string, bytes: number): CursorChunk[] {
  return withFiles(file, (log) => {
    for (let window = INDEX_WINDOW; ; window *= 2) {
      const start = Math.max(0, log.size - window);
      const buf = log.read(start, log.size - start);
      // Skip the partial record the window begins in; widen it if nothing whole is left.
      const first = start > 0 ? buf.indexOf(0x0a) + 1 : 0;
      if (start > 0 && (first === 0 || first === buf.length)) continue;
      const found = recordsIn(file, buf.subarray(first), start + first);
      let from = found.length;
      for (let got = 0; from > 0 && (got < bytes || from === found.length); ) got += textBytes((found[--from] as Located).record);
      if (from > 0 || start === 0) return log.chunks(found.slice(from), true).map(asText);
    }
  });
}

/**
 * Whether `stream`'s text before `cursor` ends a line (or there is none): a reader starting there
 * starts at a line's beginning. Looked for in the records just before the cursor; where they hold
 * none of the stream, not known, and so false.
 */
export function startsLine(file: string, cursor: number, stream: OutputStream): boolean {
  if (cursor <= 0) return true;
  return withFiles(file, (log) => {
    const start = Math.max(0, cursor - INDEX_WINDOW);
    const buf = log.read(start, cursor - start);
    const first = start > 0 ? buf.indexOf(0x0a) + 1 : 0;
    const found = recordsIn(file, buf.subarray(first), start + first);
    const last = found.findLast(({ record }) => record.s === stream && textBytes(record) > 0);
    if (!last) return start === 0;
    const [chunk] = log.chunks([last], false);
    return chunk !== undefined && chunk.data.at(-1) === 0x0a;
  });
}

/** Visits the log's records from the last back, until `visit` returns true. */
function eachRecordBackwards(file: string, visit: (record: LogRecord) => boolean): void {
  withFiles(file, (log) => {
    for (let end = log.size; end > 0; ) {
      const start = Math.max(0, end - 256 * 1024);
      const buf = log.read(start, end - start);
      const from = start > 0 ? buf.indexOf(0x0a) + 1 : 0;
      // Whole records only: a server killed while writing one leaves part of a line at the end.
      const whole = buf.subarray(from, buf.lastIndexOf(0x0a) + 1);
      const lines = whole.toString("utf8").split("\n").reverse();
      for (const line of lines) if (line && visit(parseRecord(file, line, start))) return;
      if (start === 0 || from === 0) return;
      end = start + from;
    }
  });
}

/** How far each raw capture file of an attempt had been read when the log was last written. */
export function lastRawOffsets(file: string, attempt: number): { out: number; err: number } {
  const offsets = { out: 0, err: 0 };
  let found = 0;
  eachRecordBackwards(file, (record) => {
    if (record.o === undefined || record.s === "sys") return false;
    // Older attempts wrote other files: nothing before this point is ours.
    if ((record.a ?? 1) < attempt) return true;
    if (offsets[record.s] === 0 && record.o > 0) {
      offsets[record.s] = record.o;
      found++;
    }
    return found === 2;
  });
  return offsets;
}

/** The seq of the last runner's chunk copied into the log (0: none). */
export function lastCopiedSeq(file: string): number {
  let seq = 0;
  eachRecordBackwards(file, (record) => {
    if (record.r === undefined) return false;
    seq = record.r;
    return true;
  });
  return seq;
}

/** Plain text of the last records, for `_done` and error messages; only what lies past cursor `since` (an attempt's own). */
export function tailText(file: string, maxChars: number, streams: OutputStream[] = ["out", "err", "sys"], since = 0): string {
  const text = readTail(file, maxChars * 4 + 1024)
    .filter((c) => streams.includes(c.stream) && c.cursor > since)
    .map((c) => c.text)
    .join("");
  return text.length > maxChars ? `…${text.slice(-maxChars)}` : text;
}
