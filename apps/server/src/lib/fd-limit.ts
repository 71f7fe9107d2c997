import { readFileSync } from "node:fs";

/**
 * The file descriptors this process may open (`ulimit -n`, the soft limit, which Node raises to
 * the hard one at start), read from /proc/self/limits; null where there is none (not Linux) or
 * it is unlimited. Node has no API for it.
 */
export function openFilesLimit(limitsFile = "/proc/self/limits"): number | null {
  let text: string;
  try {
    text = readFileSync(limitsFile, "utf8");
  } catch {
    return null;
  }
  const soft = /^Max open files\s+(\d+)\s/m.exec(text)?.[1];
  return soft === undefined ? null : Number(soft);
}
