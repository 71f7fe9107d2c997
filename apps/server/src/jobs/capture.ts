import { isUtf8 } from "node:buffer";
import { closeSync, fstatSync, openSync, readSync, watch, type FSWatcher } from "node:fs";
import type { OutputStream } from "@corral/shared";
import { diskFull } from "../lib/disk-space.js";
import { wholeUtf8 } from "../lib/regular-file.js";
import type { OutputLog } from "./output-log.js";

const READ_SIZE = 256 * 1024;
/**
 * A pass yields to the event loop after this much, so one fast worker cannot starve the others,
 * and no more than a WebSocket connection may queue (SEND_BUFFER_CAP): the writes of one pass
 * are done before the next, so a subscriber that keeps up stays live instead of re-reading the log.
 */
const PASS_LIMIT = 1024 * 1024;
const POLL_MS = 250;
/** Text is decoded for the parser in pieces of at most this, which the young generation collects cheaply. */
const DECODE_PIECE = 64 * 1024;

/** New bytes as they are logged and announced (UTF-8, whole characters); a listener may keep them. */
export type ChunkListener = (stream: OutputStream, data: Buffer, cursor: number) => void;
export type TextListener = (text: string, stream: OutputStream) => void;

class RawFile {
  private fd: number | null = null;
  /** The start of a character cut off by the last read, completed by the next one. */
  private held = Buffer.alloc(0);

  constructor(
    readonly stream: "out" | "err",
    readonly path: string,
    private offset: number,
  ) {}

  /** How far the file is copied: the held start of a character is read again after a restart. */
  get copied(): number {
    return this.offset - this.held.length;
  }

  /**
   * Reads what is new, up to `budget` bytes, into a buffer of its own (a live stream sends it on
   * as it is): whole characters, valid or not, and how many bytes were read.
   */
  read(budget: number): { data: Buffer; bytes: number } {
    if (this.fd === null) {
      try {
        this.fd = openSync(this.path, "r");
      } catch (err) {
        // Not there (yet, or any more: a worker stopped as it started, a data dir removed): nothing to copy.
        if ((err as NodeJS.ErrnoException).code === "ENOENT") return { data: this.held.subarray(0, 0), bytes: 0 };
        throw err;
      }
    }
    const length = Math.min(READ_SIZE, budget, fstatSync(this.fd).size - this.offset);
    if (length <= 0) return { data: this.held.subarray(0, 0), bytes: 0 };
    const buf = Buffer.allocUnsafe(this.held.length + length);
    this.held.copy(buf);
    const n = readSync(this.fd, buf, this.held.length, length, this.offset);
    this.offset += n;
    const got = buf.subarray(0, this.held.length + n);
    const whole = wholeUtf8(got);
    this.held = Buffer.from(got.subarray(whole));
    return { data: got.subarray(0, whole), bytes: n };
  }

  /** Bytes of a character the worker never finished. */
  rest(): Buffer {
    const rest = this.held;
    this.held = Buffer.alloc(0);
    return rest;
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}

/**
 * Follows a worker's raw stdout and stderr files (which the worker writes itself, so it keeps
 * running if Corral stops) and copies what is new into the job's output log.
 */
export class Capture {
  private files: RawFile[];
  private watchers: FSWatcher[] = [];
  private timer: NodeJS.Timeout | null = null;
  private scheduled = false;
  private stopped = false;
  private detached = false;
  /** Set once the log could take no more (its disk is full): what it holds stays, nothing more is copied. */
  private full = false;

  constructor(
    private readonly log: OutputLog,
    raw: { out: string; err: string },
    offsets: { out: number; err: number },
    private readonly onChunk: ChunkListener,
    /** Every piece of text, as decoded, for the adapter's parser. */
    private readonly onText: TextListener,
    private readonly attempt: number,
    /** The disk filled up: told once, as following stops. */
    private readonly onFull: () => void = () => {},
  ) {
    this.files = [new RawFile("out", raw.out, offsets.out), new RawFile("err", raw.err, offsets.err)];
  }

  start(): void {
    for (const file of this.files) {
      try {
        this.watchers.push(watch(file.path, () => this.schedule()));
      } catch {
        // The poll below still picks changes up.
      }
    }
    this.timer = setInterval(() => this.schedule(), POLL_MS);
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.stopped) return;
      try {
        if (this.pass(PASS_LIMIT) >= PASS_LIMIT) this.schedule();
      } catch (err) {
        // A file that cannot be read (EIO, EACCES after a change of mode): thrown from a timer it would
        // end the server. Following stops; the worker's end is still stored, and finish() reads again.
        this.stopWatching();
        if (diskFull(err)) this.filled();
      }
    });
  }

  /** Copies up to `limit` bytes; returns how many were copied. */
  private pass(limit: number): number {
    let total = 0;
    for (const file of this.files) {
      for (;;) {
        const { data, bytes } = file.read(limit - total);
        if (!bytes) break;
        total += bytes;
        if (data.length) this.emit(file, data);
        if (total >= limit) return total;
      }
    }
    return total;
  }

  /**
   * Logs whole characters as UTF-8 (a byte that is none as U+FFFD, as a decoder shows it), then
   * announces them: everything is in the log before any listener runs.
   */
  private emit(file: RawFile, data: Buffer): void {
    const bytes = isUtf8(data) ? data : Buffer.from(data.toString("utf8"));
    // A record ends at the last line end when it can (see atLastLineEnd).
    const cut = bytes.lastIndexOf(0x0a) + 1;
    const pieces = cut > 0 && cut < bytes.length ? [bytes.subarray(0, cut), bytes.subarray(cut)] : [bytes];
    // The raw offset is that of the whole read: a restart resumes after the last piece.
    const raw = { offset: file.copied, attempt: this.attempt };
    const cursors = pieces.map((piece, i) => this.log.append(file.stream, piece, i === pieces.length - 1 ? raw : undefined));
    for (const [i, piece] of pieces.entries()) this.onChunk(file.stream, piece, cursors[i] as number);
    for (let start = 0; start < bytes.length; ) {
      let end = Math.min(bytes.length, start + DECODE_PIECE);
      // Back to the start of a character (a continuation byte is 10xxxxxx).
      while (end < bytes.length && ((bytes[end] as number) & 0xc0) === 0x80) end--;
      this.onText(bytes.toString("utf8", start, end), file.stream);
      start = end;
    }
  }

  /**
   * Stops following and copies everything that is left, a pass per turn of the event loop as
   * while following: a worker that ended far ahead of its copy does not stall every other job.
   */
  async finish(): Promise<void> {
    this.stopWatching();
    try {
      while (!this.full && this.pass(PASS_LIMIT) > 0) {
        await new Promise((resolve) => setImmediate(resolve));
        if (this.detached) return;
      }
      for (const file of this.files) {
        const rest = file.rest();
        if (rest.length && !this.full) this.emit(file, rest);
      }
    } catch (err) {
      if (!diskFull(err)) throw err;
      this.filled();
    } finally {
      for (const file of this.files) file.close();
    }
  }

  /** Whether the disk filled up before everything was copied. */
  get lostToFullDisk(): boolean {
    return this.full;
  }

  private filled(): void {
    if (this.full) return;
    this.full = true;
    this.onFull();
  }

  private stopWatching(): void {
    this.stopped = true;
    for (const w of this.watchers) w.close();
    this.watchers = [];
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Stops following without reading further (the server is shutting down; the worker goes on). */
  detach(): void {
    this.detached = true;
    this.stopWatching();
    for (const file of this.files) file.close();
  }
}
