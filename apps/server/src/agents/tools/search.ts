import { closeSync } from "node:fs";
import path from "node:path";
import { at, OpenWorkdir, Refusal, type WalkEntry, walkEntries, withWorkdir } from "../../lib/confined-files.js";
import { globMatcher } from "../../lib/glob.js";
import { LineMatcher } from "../../lib/pattern-worker.js";
import { openRegularFile, readAt, sniffBinary } from "../../lib/regular-file.js";

/** A search stops walking here, however big the tree: the answer goes into a model's context. */
const MAX_VISITED = 20_000;
/** Directories deeper than this are not searched (a walk holds one descriptor per level). */
const MAX_DEPTH = 64;
const MAX_MATCHES = 200;
/** grep reads at most this much of each file; bigger files are searched in their first part. */
const MAX_GREP_BYTES = 1024 * 1024;
const MAX_LINE_CHARS = 300;
/** All of one grep's matching, at most: a pattern that backtracks badly is stopped with a clear error. */
export const GREP_DEADLINE_MS = 10_000;
/** Never worth searching, and often huge. */
const SKIPPED_DIRS = new Set([".git", "node_modules"]);

/** A glob (`*`, `**`, `?`, `{a,b}`) over workdir-relative paths with `/`, matched in linear time. */
function globOf(glob: string): (file: string) => boolean {
  try {
    return globMatcher(glob);
  } catch (err) {
    throw new Refusal((err as Error).message);
  }
}

/** A regular file a search found, in its open directory (valid until the walk moves on). */
type Found = Pick<WalkEntry, "rel" | "dirFd" | "name">;

/**
 * Regular files under `requested` (the workdir by default, a file or a directory), workdir-relative,
 * depth first in name order. Everything is opened from the workdir's descriptor without following
 * a link (confined-files.ts); links inside the tree are not followed at all.
 */
function* filesUnder(wd: OpenWorkdir, requested: string | undefined, budget: { left: number }): Generator<Found> {
  const start = requested?.trim() ? requested : ".";
  let dir: { fd: number; rel: string };
  try {
    dir = wd.openDir(start);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOTDIR") throw err;
    // A file: it alone is searched.
    const found = wd.locate(start, { followLast: true });
    try {
      if (found.name !== null) yield { rel: [...found.dir, found.name].join("/"), dirFd: found.dirFd, name: found.name };
    } finally {
      wd.done(found);
    }
    return;
  }
  try {
    const limits = { budget, maxDepth: MAX_DEPTH, skipDir: (_rel: string, name: string) => SKIPPED_DIRS.has(name) };
    for (const found of walkEntries(dir.fd, dir.rel, limits)) if (found.entry.isFile()) yield found;
  } finally {
    closeSync(dir.fd);
  }
}

const stopped = (budget: { left: number }) => (budget.left < 0 ? `\n[…stopped after looking at ${MAX_VISITED} entries; narrow the path]` : "");

/** Files whose workdir-relative path matches `pattern`. */
export async function globFiles(workdir: string, pattern: string, under?: string): Promise<string> {
  if (!pattern.trim()) throw new Refusal("pattern is empty");
  const matches = globOf(pattern.replace(/^\.\//, ""));
  const budget = { left: MAX_VISITED };
  const found: string[] = [];
  return withWorkdir(workdir, (wd) => {
    for (const { rel } of filesUnder(wd, under, budget)) {
      if (!matches(rel)) continue;
      if (found.length === MAX_MATCHES) return `${found.join("\n")}\n[…more than ${MAX_MATCHES} files match; narrow the pattern]`;
      found.push(rel);
    }
    return (found.join("\n") || "(no files match)") + stopped(budget);
  });
}

/** The start of a text file, opened in its (open) directory without following a link; null for binary files. */
function textOf({ dirFd, name, rel }: Found): string | null {
  const { fd, stat } = openRegularFile(at(dirFd, name), undefined, undefined, rel);
  try {
    if (sniffBinary(fd)) return null;
    return readAt(fd, 0, Math.min(stat.size, MAX_GREP_BYTES)).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

export interface GrepOptions {
  under?: string;
  include?: string;
  /** A cancelled job stops the grep, and its matching thread, at once. */
  signal?: AbortSignal;
  deadlineMs?: number;
}

/**
 * Lines matching the regular expression `pattern`, as `path:line: text`, in files under `under`
 * whose path matches `include`. The pattern runs in a worker thread with a deadline
 * (lib/pattern-worker.ts): the event loop never waits on it.
 */
export async function grepFiles(workdir: string, pattern: string, opts: GrepOptions = {}): Promise<string> {
  const matcher = new LineMatcher(pattern, { deadlineMs: opts.deadlineMs ?? GREP_DEADLINE_MS, signal: opts.signal });
  try {
    const only = opts.include?.trim() ? globOf(opts.include) : null;
    const budget = { left: MAX_VISITED };
    const lines: string[] = [];
    const wd = OpenWorkdir.open(workdir);
    try {
      for (const file of filesUnder(wd, opts.under, budget)) {
        if (only && !only(file.rel) && !only(path.posix.basename(file.rel))) continue;
        let text: string | null;
        try {
          text = textOf(file);
        } catch {
          continue; // gone, swapped for a link, or not a regular file since it was listed
        }
        if (text === null) continue;
        const fileLines = text.split("\n");
        for (const n of await matcher.matchLines(text, MAX_MATCHES - lines.length + 1)) {
          const line = fileLines[n] ?? "";
          if (lines.length === MAX_MATCHES) return `${lines.join("\n")}\n[…more than ${MAX_MATCHES} matching lines; narrow the pattern or the path]`;
          lines.push(`${file.rel}:${n + 1}: ${line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line}`);
        }
      }
      return (lines.join("\n") || "(no matches)") + stopped(budget);
    } finally {
      wd.close();
    }
  } finally {
    matcher.close();
  }
}
