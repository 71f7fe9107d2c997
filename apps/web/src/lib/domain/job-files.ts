import type { JobFile } from "@corral/shared";

/** Merges file events into a job's list: the latest state of each path wins, sorted by path. */
export function mergeJobFiles(current: JobFile[], incoming: JobFile[]): JobFile[] {
  const byPath = new Map(current.map((f) => [f.path, f]));
  for (const file of incoming) {
    const known = byPath.get(file.path);
    if (!known || known.at <= file.at) byPath.set(file.path, file);
  }
  return [...byPath.values()].sort((a, b) => a.path.localeCompare(b.path));
}
