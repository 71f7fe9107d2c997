import { closeSync, lstatSync, type Stats } from "node:fs";
import type { DirEntry, DirEntryType, DirListing } from "@corral/shared";
import { at, type OpenWorkdir, readEntries } from "../lib/confined-files.js";
import { ServiceError } from "../lib/errors.js";

/** The most entries one listing holds (a runner's answer holding more is refused). */
export const MAX_ENTRIES = 5000;

function entryType(st: Stats): DirEntryType {
  if (st.isSymbolicLink()) return "symlink";
  if (st.isDirectory()) return "dir";
  if (st.isFile()) return "file";
  return "other";
}

/**
 * The entries of directory `real` of the open workdir `wd` (at most MAX_ENTRIES), directories
 * first: read through its descriptor, links listed, never followed.
 */
export function listDir(wd: OpenWorkdir, real: string): DirListing {
  let fd: number;
  try {
    fd = wd.openDir(real).fd;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOTDIR") throw new ServiceError(`${real} is not a directory; read it instead`, 400, "path");
    throw err;
  }
  const entries: DirEntry[] = [];
  let truncated: boolean;
  try {
    const read = readEntries(fd, MAX_ENTRIES);
    truncated = read.more;
    for (const d of read.entries) {
      try {
        const st = lstatSync(at(fd, d.name));
        entries.push({ name: d.name, type: entryType(st), size: st.isFile() ? st.size : null, mtime: st.mtimeMs });
      } catch {
        // Gone between the listing and the stat.
      }
    }
  } finally {
    closeSync(fd);
  }
  entries.sort((a, b) => Number(b.type === "dir") - Number(a.type === "dir") || a.name.localeCompare(b.name));
  return { path: real, entries, truncated };
}
