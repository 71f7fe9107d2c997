import { ServiceError } from "../lib/errors.js";

/**
 * Who is acting on a worktree now: a merge or discard, or a follow-up launch into it. Each holds
 * the worktree until it is done, and the other is refused meanwhile: a follow-up must not start in
 * a worktree being merged away, and a merge must not begin while a follow-up's launch (which will
 * run there) is not yet stored. One map for the process: a worktree's path is unique on a machine.
 */
const held = new Map<string, string>();

/**
 * Holds the worktree at `path` for `what` ("being merged"); the answer releases it. Refused (409,
 * naming `field`) while something else holds it.
 */
export function holdWorktree(path: string, what: string, field: string): () => void {
  const holder = held.get(path);
  if (holder !== undefined) {
    throw new ServiceError(`the worktree ${path} is ${holder}; try again once that is done`, 409, field, undefined, "conflict");
  }
  held.set(path, what);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    held.delete(path);
  };
}
