import { randomFillSync } from "node:crypto";
import { closeSync, constants, fstatSync, lstatSync, openSync, statfsSync, unlinkSync, writeSync } from "node:fs";
import path from "node:path";
import { ServiceError } from "./errors.js";
import { PRIVATE_FILE_MODE } from "./private-files.js";

/**
 * Space Corral keeps aside in its data dir, so that when the disk fills up the ends of its jobs
 * and their cancels can still be written (SQLite needs room in its WAL for every commit). The
 * same is needed free besides it for a launch.
 */
export const RESERVE_BYTES = 4 * 1024 * 1024;
export const RESERVE_FILE = "space-reserve";

/** Whether a write failed because its disk, or its owner's quota, is full (SQLite says SQLITE_FULL). */
export function diskFull(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (code === "ENOSPC" || code === "EDQUOT" || code === "SQLITE_FULL") return true;
  }
  return false;
}

/** What a job's record and every door say about it: where, and what to do. */
export const diskFullMessage = (dataDir: string) =>
  `the disk that holds the data dir ${dataDir} is full; free some space on it (df -h ${dataDir} shows how much is left)`;

/** A launch (or any write a door asked for) refused for a full disk: nothing was stored. */
export const diskFullError = (dataDir: string) =>
  new ServiceError(
    `${diskFullMessage(dataDir)}, then try again. Corral needs ${RESERVE_BYTES / 1024 / 1024} MiB free there to start a job; nothing was stored`,
    507,
    undefined,
    undefined,
    "disk_full",
  );

/**
 * The reserve: a file of random bytes (compressing file systems cannot shrink it) in the data dir.
 * Released when a write finds the disk full, made again once there is room.
 */
export class SpaceReserve {
  readonly file: string;

  constructor(readonly dataDir: string) {
    this.file = path.join(dataDir, RESERVE_FILE);
  }

  /**
   * Whether the reserve is in place, made now if it can be: false when the disk has no room for
   * all of it. The part there was room for is kept, for the next write that finds the disk full.
   * Another failure (a data dir gone, a directory in its place) is no full disk: true, held or not.
   */
  hold(): boolean {
    let fd: number | null = null;
    try {
      // Only a file of this user's own making counts: a link (symbolic or hard) a worker put in its
      // place is removed, never written through.
      const found = lstatSync(this.file, { throwIfNoEntry: false });
      if (found && (!found.isFile() || found.nlink !== 1)) unlinkSync(this.file);
      else if (found?.size === RESERVE_BYTES) return true;
      fd = openSync(this.file, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK, PRIVATE_FILE_MODE);
      const st = fstatSync(fd);
      if (!st.isFile() || st.nlink !== 1) throw new Error(`${this.file} changed while it was made`);
      const chunk = Buffer.allocUnsafe(256 * 1024);
      for (let at = st.size; at < RESERVE_BYTES; ) {
        randomFillSync(chunk);
        at += writeSync(fd, chunk, 0, Math.min(chunk.length, RESERVE_BYTES - at), at);
      }
      return true;
    } catch (err) {
      if (diskFull(err)) return false;
      // No reserve rather than one of unknown state; work goes on without it.
      this.release();
      return true;
    } finally {
      if (fd !== null) closeSync(fd);
    }
  }

  /** Gives the reserve's space back to the disk; false when there was none to give. */
  release(): boolean {
    try {
      unlinkSync(this.file);
      return true;
    } catch {
      return false;
    }
  }

  /** Refuses new work (507) unless the reserve is in place and as much again is free. */
  assertRoom(): void {
    if (!this.hold() || freeBytes(this.dataDir) < RESERVE_BYTES) throw diskFullError(this.dataDir);
  }

  /**
   * Runs a write that records what happened (a job's end, a cancel); a disk found full gives it
   * the reserve and it is tried once more. The write must be whole or nothing (a transaction).
   */
  async write<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (err) {
      if (!diskFull(err) || !this.release()) throw err;
      return write();
    }
  }
}

/** Bytes this user may still write on the data dir's disk (Infinity where the system cannot tell). */
function freeBytes(dir: string): number {
  try {
    const fs = statfsSync(dir);
    return fs.bavail * fs.bsize;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}
