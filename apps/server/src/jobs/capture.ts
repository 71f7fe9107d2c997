import { closeSync, openSync, readSync, watch, type FSWatcher } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import type { OutputStream } from "@corral/shared";
import { atLastLineEnd, type OutputLog } from "./output-log.js";

const READ_SIZE = 64 * 1024;
/** A pass yields to the event loop after this much, so one fast worker cannot starve the others. */
const PASS_LIMIT = 4 * 1024 * 1024;
const POLL_MS = 250;

export type ChunkListener = (stream: OutputStream, text: string, cursor: number) => void;
export type TextListener = (text: string, stream: OutputStream) => void;

class RawFile {
  private fd: number | null = null;
  private decoder = new StringDecoder("utf8");
  /** Reused: each read is decoded to a string before the next one. */
  private buf = Buffer.allocUnsafe(READ_SIZE);

  constructor(
    readonly stream: "out" | "err",
    readonly path: string,
    public offset: number,
  ) {}

  /** Reads what is new, up to `budget` bytes; returns the text and how many bytes were read. */
  read(budget: number): { text: string; bytes: number } {
    this.fd ??= openSync(this.path, "r");
    const n = readSync(this.fd, this.buf, 0, Math.min(READ_SIZE, budget), this.offset);
    this.offset += n;
    return { text: n ? this.decoder.write(this.buf.subarray(0, n)) : "", bytes: n };
  }

  /** Bytes of a character the worker never finished, as the replacement character. */
  rest(): string {
    return this.decoder.end();
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

  constructor(
    private readonly log: OutputLog,
    raw: { out: string; err: string },
    offsets: { out: number; err: number },
    private readonly onChunk: ChunkListener,
    /** Every piece of text, as decoded, for the adapter's parser. */
    private readonly onText: TextListener,
    private readonly attempt: number,
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
      if (this.pass(PASS_LIMIT) >= PASS_LIMIT) this.schedule();
    });
  }

  /** Copies up to `limit` bytes; returns how many were copied. */
  private pass(limit: number): number {
    let total = 0;
    for (const file of this.files) {
      for (;;) {
        const { text, bytes } = file.read(limit - total);
        if (!bytes) break;
        total += bytes;
        if (text) this.emit(file, text);
        if (total >= limit) return total;
      }
    }
    return total;
  }

  private emit(file: RawFile, text: string): void {
    const pieces = atLastLineEnd(text);
    pieces.forEach((piece, i) => {
      // The raw offset is that of the whole read: a restart resumes after the last piece.
      const raw = i === pieces.length - 1 ? { offset: file.offset, attempt: this.attempt } : undefined;
      this.onChunk(file.stream, piece, this.log.append(file.stream, piece, raw));
    });
    this.onText(text, file.stream);
  }

  /** Stops following and copies everything that is left. */
  finish(): void {
    this.stopWatching();
    while (this.pass(PASS_LIMIT) > 0);
    for (const file of this.files) {
      const rest = file.rest();
      if (rest) this.emit(file, rest);
      file.close();
    }
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
    this.stopWatching();
    for (const file of this.files) file.close();
  }
}
