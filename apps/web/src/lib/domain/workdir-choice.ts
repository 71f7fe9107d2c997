import type { WorkdirList } from "@corral/shared";

export type KnownWorkdir = WorkdirList["workdirs"][number];

const inside = (path: string, dir: string) => path === dir || path.startsWith(`${dir.replace(/\/$/, "")}/`);

/**
 * The workdir the Files page opens on: the one the URL names; else the one holding the file the
 * URL names (the deepest, when they nest); else the one a job used last; else the only one. Null:
 * nothing says which of several, so the page asks rather than opening the alphabetically first.
 */
export function openingWorkdir(workdirs: KnownWorkdir[], fromUrl: { workdir: string | null; path: string | null }): string | null {
  if (fromUrl.workdir) return fromUrl.workdir;
  const { path } = fromUrl;
  if (path) {
    const holding = workdirs.filter((w) => inside(path, w.path)).sort((a, b) => b.path.length - a.path.length)[0];
    if (holding) return holding.path;
  }
  const [latest] = byRecentUse(workdirs);
  if (latest?.lastJobAt != null) return latest.path;
  return workdirs.length === 1 ? (workdirs[0]?.path ?? null) : null;
}

/** Those a job used most recently first, then the rest (only agents name them) by path. */
export function byRecentUse(workdirs: KnownWorkdir[]): KnownWorkdir[] {
  return [...workdirs].sort((a, b) => (b.lastJobAt ?? -1) - (a.lastJobAt ?? -1) || a.path.localeCompare(b.path));
}

/**
 * The workdirs matching what was typed, most recently used first: every word must appear
 * (case-insensitively) in the path, an agent's name or the runner's name, so "api tests" finds
 * /srv/api/tests and "gemini" every workdir of the gemini agent.
 */
export function matchWorkdirs(workdirs: KnownWorkdir[], typed: string): KnownWorkdir[] {
  const words = typed.toLowerCase().split(/\s+/).filter(Boolean);
  const matches = (w: KnownWorkdir) => {
    const haystack = [w.path, ...w.agents, w.runner ?? ""].join("\n").toLowerCase();
    return words.every((word) => haystack.includes(word));
  };
  return byRecentUse(words.length ? workdirs.filter(matches) : workdirs);
}
