import { chmodSync, mkdirSync, statSync } from "node:fs";

/**
 * Modes for everything Corral keeps in its data dir (the token, the registry, job output): only
 * its user may read them. A mode given at creation is only ever narrowed by the umask, so these
 * hold under any umask; files and dirs that already exist are narrowed by `makePrivate`.
 */
export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;

/** Drops the group and other bits of an existing file or directory; a missing one is left alone. */
export function makePrivate(target: string): void {
  let mode: number;
  try {
    mode = statSync(target).mode;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  if (mode & 0o077) chmodSync(target, mode & 0o700);
}

/** Creates `dir` (and missing parents) owner-only, and narrows it if it already existed. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  makePrivate(dir);
}
