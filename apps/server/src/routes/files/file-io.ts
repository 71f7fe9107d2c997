import { closeSync, constants, fstatSync, lstatSync, openSync, opendirSync, readSync, type Stats } from "node:fs";
import path from "node:path";
import type { DirEntry, DirEntryType, DirListing, FileRead } from "@corral/shared";
import { ServiceError } from "../../lib/errors.js";

const MAX_ENTRIES = 5000;
const SNIFF_BYTES = 8192;

function entryType(st: Stats): DirEntryType {
  if (st.isSymbolicLink()) return "symlink";
  if (st.isDirectory()) return "dir";
  if (st.isFile()) return "file";
  return "other";
}

export function listDir(real: string): DirListing {
  let dir;
  try {
    dir = opendirSync(real);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOTDIR") throw new ServiceError(`${real} is not a directory; read it instead`, 400, "path");
    throw err;
  }
  const entries: DirEntry[] = [];
  let truncated = false;
  try {
    for (let d = dir.readSync(); d; d = dir.readSync()) {
      if (entries.length >= MAX_ENTRIES) {
        truncated = true;
        break;
      }
      try {
        const st = lstatSync(path.join(real, d.name));
        entries.push({ name: d.name, type: entryType(st), size: st.isFile() ? st.size : null, mtime: st.mtimeMs });
      } catch {
        // Gone between the listing and the stat.
      }
    }
  } finally {
    dir.closeSync();
  }
  entries.sort((a, b) => Number(b.type === "dir") - Number(a.type === "dir") || a.name.localeCompare(b.name));
  return { path: real, entries, truncated };
}

/**
 * Opens a regular file for reading. O_NOFOLLOW and O_NONBLOCK keep a path swapped for a link or
 * a FIFO after the checks from escaping or hanging; fstat then refuses anything but a file.
 */
export function openRegularFile(real: string): { fd: number; stat: Stats } {
  const fd = openSync(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  const stat = fstatSync(fd);
  if (!stat.isFile()) {
    closeSync(fd);
    const what = stat.isDirectory() ? "a directory; list it instead" : "not a regular file (device, FIFO or socket); only files can be read";
    throw new ServiceError(`${real} is ${what}`, 400, "path");
  }
  return { fd, stat };
}

function readAt(fd: number, position: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  return buf.subarray(0, readSync(fd, buf, 0, length, position));
}

/** Length of `buf` without a UTF-8 sequence cut off at its end. */
function wholeUtf8(buf: Buffer): number {
  let i = buf.length - 1;
  let back = 0;
  while (i >= 0 && back < 4 && (buf[i]! & 0xc0) === 0x80) {
    i--;
    back++;
  }
  if (i < 0) return buf.length;
  const lead = buf[i]!;
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

/** A window of a file as text (never splitting a character), or only its facts when binary. */
export function readWindow(real: string, offset: number, limit: number): FileRead {
  const { fd, stat } = openRegularFile(real);
  try {
    const binary = sniffBinary(fd);
    const base = { path: real, size: stat.size, mtime: stat.mtimeMs, binary, offset: Math.min(offset, stat.size) };
    if (binary) return { ...base, length: 0, text: null };
    let buf = readAt(fd, base.offset, Math.min(limit, Math.max(0, stat.size - base.offset)));
    // Start on a character boundary when the offset falls inside one.
    let skip = 0;
    while (skip < buf.length && skip < 3 && (buf[skip]! & 0xc0) === 0x80) skip++;
    buf = buf.subarray(skip, base.offset + buf.length < stat.size ? wholeUtf8(buf) : buf.length);
    return { ...base, offset: base.offset + skip, length: buf.length, text: buf.toString("utf8") };
  } finally {
    closeSync(fd);
  }
}

/** One byte range from a `Range` header, or null to send the whole file (absent, multiple or malformed). */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | "unsatisfiable" | null {
  const m = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!m || (m[1] === "" && m[2] === "")) return null;
  if (m[1] === "") {
    const suffix = Number(m[2]);
    if (suffix === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || end < start) return "unsatisfiable";
  return { start, end };
}
