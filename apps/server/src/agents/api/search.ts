import { closeSync } from "node:fs";
import { opendir } from "node:fs/promises";
import path from "node:path";
import { confine, Refusal } from "../../lib/confined-files.js";
import { openRegularFile, readAt, sniffBinary } from "../../lib/regular-file.js";

/** A search stops walking here, however big the tree: the answer goes into a model's context. */
const MAX_VISITED = 20_000;
const MAX_MATCHES = 200;
/** grep reads at most this much of each file; bigger files are searched in their first part. */
const MAX_GREP_BYTES = 1024 * 1024;
const MAX_LINE_CHARS = 300;
/** Never worth searching, and often huge. */
const SKIPPED_DIRS = new Set([".git", "node_modules"]);

/** A glob (`*`, `**`, `?`, `{a,b}`) as a regular expression over workdir-relative paths with `/`. */
export function globRegExp(glob: string): RegExp {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === "*" && glob[i + 1] === "*") {
      // `**/` matches any number of directories, none included.
      const slash = glob[i + 2] === "/";
      out += slash ? "(?:.*/)?" : ".*";
      i += slash ? 2 : 1;
    } else if (c === "*") out += "[^/]*";
    else if (c === "?") out += "[^/]";
    else if (c === "{") {
      const end = glob.indexOf("}", i);
      if (end < 0) out += "\\{";
      else {
        out += `(?:${glob
          .slice(i + 1, end)
          .split(",")
          .map((alt) => alt.replace(/[.+^${}()|[\]\\*?]/g, "\\$&"))
          .join("|")})`;
        i = end;
      }
    } else out += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${out}$`);
}

/**
 * Regular files under `start` (a confined real path), workdir-relative, in a stable order. Symlinks
 * are not followed: one could lead out of the workdir.
 */
async function* walk(root: string, start: string, budget: { left: number }): AsyncGenerator<string> {
  const dirs = [start];
  while (dirs.length) {
    const dir = dirs.shift() as string;
    const handle = await opendir(dir);
    const entries = [];
    for await (const entry of handle) entries.push(entry);
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      if (--budget.left < 0) return;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory() && !SKIPPED_DIRS.has(entry.name)) dirs.push(full);
      else if (entry.isFile()) yield path.relative(root, full).split(path.sep).join("/");
    }
  }
}

async function startOf(workdir: string, requested: string | undefined): Promise<string> {
  return confine(workdir, requested?.trim() ? requested : ".");
}

const stopped = (budget: { left: number }) => (budget.left < 0 ? `\n[…stopped after looking at ${MAX_VISITED} entries; narrow the path]` : "");

/** Files whose workdir-relative path matches `pattern`. */
export async function globFiles(workdir: string, pattern: string, under?: string): Promise<string> {
  if (!pattern.trim()) throw new Refusal("pattern is empty");
  const root = await confine(workdir, ".");
  const re = globRegExp(pattern.replace(/^\.\//, ""));
  const budget = { left: MAX_VISITED };
  const found: string[] = [];
  for await (const file of walk(root, await startOf(workdir, under), budget)) {
    if (!re.test(file)) continue;
    if (found.length === MAX_MATCHES) return `${found.join("\n")}\n[…more than ${MAX_MATCHES} files match; narrow the pattern]`;
    found.push(file);
  }
  return (found.join("\n") || "(no files match)") + stopped(budget);
}

function textOf(file: string): string | null {
  const { fd, stat } = openRegularFile(file);
  try {
    if (sniffBinary(fd)) return null;
    return readAt(fd, 0, Math.min(stat.size, MAX_GREP_BYTES)).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/** Lines matching the regular expression `pattern`, as `path:line: text`, in files under `under` whose path matches `include`. */
export async function grepFiles(workdir: string, pattern: string, under?: string, include?: string): Promise<string> {
  let re: RegExp;
  try {
    re = new RegExp(pattern);
  } catch (err) {
    throw new Refusal(`pattern is not a valid regular expression: ${(err as Error).message}`);
  }
  const root = await confine(workdir, ".");
  const only = include?.trim() ? globRegExp(include) : null;
  const budget = { left: MAX_VISITED };
  const lines: string[] = [];
  for await (const file of walk(root, await startOf(workdir, under), budget)) {
    if (only && !only.test(file) && !only.test(path.posix.basename(file))) continue;
    let text: string | null;
    try {
      text = textOf(path.join(root, file));
    } catch {
      continue;
    }
    if (text === null) continue;
    const fileLines = text.split("\n");
    for (let n = 0; n < fileLines.length; n++) {
      const line = fileLines[n] as string;
      if (!re.test(line)) continue;
      if (lines.length === MAX_MATCHES) return `${lines.join("\n")}\n[…more than ${MAX_MATCHES} matching lines; narrow the pattern or the path]`;
      lines.push(`${file}:${n + 1}: ${line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line}`);
    }
  }
  return (lines.join("\n") || "(no matches)") + stopped(budget);
}
