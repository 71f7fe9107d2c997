// Regular files opened without following a link or blocking on a FIFO, and read a bounded window
// at a time as text: shared by the file API and the agents' file tools (through confined-files.ts).
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";
import type { FileRead } from "@corral/shared";
import { ServiceError } from "./errors.js";

const SNIFF_BYTES = 8192;

/**
 * Opens a regular file (for reading unless `flags` say otherwise). O_NOFOLLOW and O_NONBLOCK keep
 * a path swapped for a link or a FIFO after the checks from escaping or hanging: a FIFO opens at
 * once (or, for writing without a reader, fails with ENXIO) instead of waiting for its other end.
 * fstat then refuses anything but a file, whoever asked (the file API, a model's file tools).
 * `label` names the file in messages (`file` may be a /proc/self/fd path).
 */
export function openRegularFile(file: string, flags: number = constants.O_RDONLY, mode = 0o644, label = file): OpenFile {
  let fd: number;
  try {
    fd = openSync(file, flags | constants.O_NOFOLLOW | constants.O_NONBLOCK, mode);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENXIO") throw notRegular(label);
    throw err;
  }
  const stat = fstatSync(fd);
  if (!stat.isFile()) {
    closeSync(fd);
    throw stat.isDirectory() ? new ServiceError(`${label} is a directory; list it instead`, 400, "path") : notRegular(label);
  }
  return { fd, stat };
}

export interface OpenFile {
  fd: number;
  stat: Stats;
}

const notRegular = (real: string) =>
  new ServiceError(`${real} is not a regular file (device, FIFO or socket); only files can be opened`, 400, "path");

/** Reads `length` bytes at `position` of an open file (fewer at its end). */
export function readAt(fd: number, position: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  return buf.subarray(0, readSync(fd, buf, 0, length, position));
}

/** Length of `buf` without a UTF-8 sequence cut off at its end. */
export function wholeUtf8(buf: Buffer): number {
  let i = buf.length - 1;
  let back = 0;
  while (i >= 0 && back < 4 && ((buf[i] ?? 0) & 0xc0) === 0x80) {
    i--;
    back++;
  }
  if (i < 0) return buf.length;
  const lead = buf[i] ?? 0;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return buf.length - i < need ? i : buf.length;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Text if the start of the file is valid UTF-8 without NUL bytes; that is what editors assume too. */
function looksBinary(sample: Buffer): boolean {
  if (sample.includes(0)) return true;
  try {
    utf8.decode(sample.subarray(0, wholeUtf8(sample)));
    return false;
  } catch {
    return true;
  }
}

export function sniffBinary(fd: number): boolean {
  return looksBinary(readAt(fd, 0, SNIFF_BYTES));
}

/** A window of an open file as text (never splitting a character), or only its facts when binary; `label` is its path. */
export function readWindow({ fd, stat }: OpenFile, label: string, offset: number, limit: number): FileRead {
  const binary = sniffBinary(fd);
  const base = { path: label, size: stat.size, mtime: stat.mtimeMs, binary, offset: Math.min(offset, stat.size) };
  if (binary) return { ...base, length: 0, text: null };
  let buf = readAt(fd, base.offset, Math.min(limit, Math.max(0, stat.size - base.offset)));
  // Start on a character boundary when the offset falls inside one.
  let skip = 0;
  while (skip < buf.length && skip < 3 && ((buf[skip] ?? 0) & 0xc0) === 0x80) skip++;
  buf = buf.subarray(skip, base.offset + buf.length < stat.size ? wholeUtf8(buf) : buf.length);
  return { ...base, offset: base.offset + skip, length: buf.length, text: buf.toString("utf8") };
}
