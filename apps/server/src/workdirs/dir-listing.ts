import { type Dir, lstatSync, opendirSync, type Stats } from "node:fs";
import path from "node:path";
import type { DirEntry, DirEntryType, DirListing } from "@corral/shared";
import { ServiceError } from "../lib/errors.js";

/** The most entries one listing holds (a runner's answer holding more is refused). */
export const MAX_ENTRIES = 5000;

function entryType(st: Stats): DirEntryType {
  if (st.isSymbolicLink()) return "symlink";
  if (st.isDirectory()) return "dir";
  if (st.isFile()) return "file";
  return "other";
}

/** A directory's entries (at most MAX_ENTRIES), directories first; links are listed, never followed. */
export function listDir(real: string): DirListing {
  let dir: Dir;
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
