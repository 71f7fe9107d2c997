// Confinement to a workdir by what is opened, not by path strings: the workdir is opened once and
// every path below it is opened a component at a time relative to its parent's descriptor, none
// of them through a link. A worker that swaps a directory for a symlink between our looking and
// our opening gets a refusal, never the link's target. Node has no openat(2); on Linux,
// `/proc/self/fd/<dir>/<name>` opened with O_NOFOLLOW is the same thing (the descriptor's
// directory, then `name` in it, the last component not followed). Without /proc there is no way
// to do this, and the file tools and the file API refuse instead of running unconfined.
import {
  closeSync,
  constants,
  type Dirent,
  existsSync,
  ftruncateSync,
  lstatSync,
  mkdirSync,
  opendirSync,
  openSync,
  readlinkSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import { ServiceError } from "./errors.js";
import { isInside } from "./paths.js";
import { openRegularFile } from "./regular-file.js";

/** A path the workdir's confinement does not allow; the message says why. */
export class Refusal extends Error {}

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
/** Links a path may pass through that stay inside the workdir, as the kernel's own limit. */
const MAX_LINK_HOPS = 40;
/**
 * Directories opened and names looked up by one lookup, at most. Without /proc/self/fd's help the
 * kernel stops a path at 4096 bytes; here a long path (`a/a/a/…`, created one mkdir at a time by
 * write_file) or `..` in links (each re-walks from the root) could make millions of synchronous
 * calls on the event loop.
 */
const MAX_LOOKUP_STEPS = 4096;
/** A path asked for, at most (a model's tool call may carry megabytes). */
const MAX_PATH_CHARS = 65_536;

/** `name` in the directory open as `dirFd`, as a path the kernel resolves like openat(dirFd, name). */
export const at = (dirFd: number, name: string) => `/proc/self/fd/${dirFd}/${name}`;

let procChecked = false;
function requireProc(): void {
  if (procChecked) return;
  if (!existsSync("/proc/self/fd")) {
    throw new ServiceError(
      "workdir files can only be opened safely where /proc is mounted (Linux): without it a symlink swapped in mid-way could not be told apart, so file access is refused",
      503,
    );
  }
  procChecked = true;
}

const errno = (err: unknown) => (err as NodeJS.ErrnoException).code;

/** Names below the root, in order; `requested` may be relative to the root or absolute inside it. */
function namesOf(root: string, requested: string): string[] {
  if (typeof requested !== "string" || !requested.trim()) throw new Refusal("path is empty");
  if (requested.includes("\0")) throw new Refusal("path contains a NUL byte");
  if (requested.length > MAX_PATH_CHARS) throw new Refusal(`path is longer than ${MAX_PATH_CHARS} characters`);
  const target = path.resolve(root, requested);
  if (!isInside(target, root)) throw new Refusal(`${requested} is outside the working directory`);
  return path.relative(root, target).split(path.sep).filter(Boolean);
}

const tooDeep = (requested: string) =>
  new Refusal(
    `${requested.length > 200 ? `${requested.slice(0, 200)}…` : requested} is too deep (more than ${MAX_LOOKUP_STEPS} directories to open, counting those its symlinks lead through)`,
  );

/** Where a lookup ended: the open directory holding `name` (null: the directory itself was asked for). */
export interface Located {
  dirFd: number;
  /** Workdir-relative names of `dirFd`, none of them a link. */
  dir: string[];
  name: string | null;
  /** `name` came from a link's target (and may not exist: a dangling link). */
  viaLink: boolean;
}

/**
 * A workdir held open by its descriptor. Everything below it is reached from that descriptor; the
 * workdir itself must still be the real directory the job resolved (not a link, nor under one).
 */
export class OpenWorkdir {
  private constructor(
    readonly root: string,
    readonly fd: number,
  ) {}

  static open(workdir: string): OpenWorkdir {
    requireProc();
    const root = path.resolve(workdir);
    let fd: number;
    try {
      fd = openSync(root, DIR_FLAGS);
    } catch (err) {
      if (errno(err) === "ENOTDIR" || errno(err) === "ELOOP")
        throw new Refusal(`the working directory ${root} is no longer a directory (a symlink was put in its place)`);
      throw err;
    }
    // An ancestor swapped for a link would land the open elsewhere: the descriptor says where it is.
    const real = readlinkSync(`/proc/self/fd/${fd}`);
    if (real !== root) {
      closeSync(fd);
      throw new Refusal(`the working directory ${root} now resolves to ${real} (a symlink was put in its place)`);
    }
    return new OpenWorkdir(root, fd);
  }

  close(): void {
    closeSync(this.fd);
  }

  /**
   * Finds `requested` below the root: each directory opened from its parent's descriptor without
   * following a link. A link met on the way is read and its target looked up from the root the
   * same way (so links that stay inside work, and those that point out are refused); the last
   * component's link only when `followLast`. `create` makes missing directories on the way.
   * The caller closes `dirFd` unless it is the root's.
   */
  locate(requested: string, opts: { create?: boolean; followLast?: boolean } = {}): Located {
    const todo = namesOf(this.root, requested);
    if (todo.length > MAX_LOOKUP_STEPS) throw tooDeep(requested);
    let dir: string[] = [];
    let cur = this.fd;
    let hops = 0;
    let viaLink = false;
    let steps = 0;
    const step = () => {
      if (++steps > MAX_LOOKUP_STEPS) throw tooDeep(requested);
    };
    const release = () => {
      if (cur !== this.fd) closeSync(cur);
      cur = this.fd;
    };
    const descend = (name: string) => {
      step();
      let next: number;
      try {
        next = openSync(at(cur, name), DIR_FLAGS);
      } catch (err) {
        if ((errno(err) === "ENOTDIR" || errno(err) === "ELOOP") && isLink(cur, name)) {
          throw new Refusal(`${[...dir, name].join("/")} became a symlink while it was opened; refusing to follow it`);
        }
        throw err;
      }
      release();
      cur = next;
      dir.push(name);
    };
    const from = (names: string[]) => {
      release();
      dir = [];
      for (const name of names) descend(name);
    };
    try {
      for (let name = todo.shift(); name !== undefined; name = todo.shift()) {
        const last = todo.length === 0;
        if (name === ".") continue;
        if (name === "..") {
          // Only from a link's target: the requested path was made lexical already.
          if (!dir.length) throw new Refusal(`${requested} resolves outside the working directory (through a symlink)`);
          from(dir.slice(0, -1));
          continue;
        }
        if (last && !opts.followLast) return { dirFd: cur, dir, name, viaLink };
        let linked: boolean;
        try {
          linked = lstatSync(at(cur, name)).isSymbolicLink();
        } catch (err) {
          if (errno(err) !== "ENOENT") throw err;
          if (last) return { dirFd: cur, dir, name, viaLink };
          if (!opts.create) throw err;
          if (viaLink) throw new Refusal(`${requested} is a symlink to nowhere; refusing to follow it`);
          mkdirSync(at(cur, name), 0o755);
          descend(name);
          continue;
        }
        if (linked) {
          if (++hops > MAX_LINK_HOPS) throw new Refusal(`${requested} passes through more than ${MAX_LINK_HOPS} symlinks`);
          const target = readlinkSync(at(cur, name));
          if (path.isAbsolute(target)) {
            if (!isInside(path.resolve(target), this.root))
              throw new Refusal(`${requested} resolves outside the working directory (through a symlink)`);
            from([]);
            todo.unshift(...path.relative(this.root, path.resolve(target)).split(path.sep).filter(Boolean));
          } else todo.unshift(...target.split("/").filter(Boolean));
          viaLink ||= last;
          continue;
        }
        if (last) return { dirFd: cur, dir, name, viaLink };
        descend(name);
      }
      return { dirFd: cur, dir, name: null, viaLink };
    } catch (err) {
      release();
      throw err;
    }
  }

  /** A directory below the root (links inside followed), opened; the caller closes it. */
  openDir(requested: string): { fd: number; rel: string } {
    const found = this.locate(requested, { followLast: true });
    if (found.name === null) return { fd: found.dirFd === this.fd ? openSync(at(this.fd, "."), DIR_FLAGS) : found.dirFd, rel: found.dir.join("/") };
    try {
      return { fd: openSync(at(found.dirFd, found.name), DIR_FLAGS), rel: [...found.dir, found.name].join("/") };
    } finally {
      this.done(found);
    }
  }

  /** A regular file below the root (links inside followed), opened for reading; the caller closes it. */
  openFile(requested: string): ReturnType<typeof openRegularFile> & { rel: string } {
    const found = this.locate(requested, { followLast: true });
    try {
      if (found.name === null) throw new ServiceError(`${requested} is a directory; list it instead`, 400, "path");
      const rel = [...found.dir, found.name].join("/");
      return { ...openRegularFile(at(found.dirFd, found.name), constants.O_RDONLY, 0, rel), rel };
    } finally {
      this.done(found);
    }
  }

  /** Closes what locate() opened. */
  done(found: Located): void {
    if (found.dirFd !== this.fd) closeSync(found.dirFd);
  }
}

function isLink(dirFd: number, name: string): boolean {
  try {
    return lstatSync(at(dirFd, name)).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Runs `use` with `workdir` open, closing it however `use` ends. */
export function withWorkdir<T>(workdir: string, use: (wd: OpenWorkdir) => T): T {
  const wd = OpenWorkdir.open(workdir);
  try {
    return use(wd);
  } finally {
    wd.close();
  }
}

/** Reads at most `max` entries of an open directory, through its descriptor. */
export function readEntries(dirFd: number, max: number): { entries: Dirent[]; more: boolean } {
  const dir = opendirSync(at(dirFd, "."));
  const entries: Dirent[] = [];
  try {
    for (let entry = dir.readSync(); entry; entry = dir.readSync()) {
      if (entries.length === max) return { entries, more: true };
      entries.push(entry);
    }
    return { entries, more: false };
  } finally {
    dir.closeSync();
  }
}

/** An entry a walk found that is not a directory, with its open parent (valid until the walk moves on). */
export interface WalkEntry {
  /** Workdir-relative, with `/`. */
  rel: string;
  dirFd: number;
  name: string;
  entry: Dirent;
}

export interface WalkLimits {
  /** Entries left to look at; below zero the walk stopped. */
  budget: { left: number };
  /** Deeper directories are not entered: a walk holds one descriptor per level. */
  maxDepth: number;
  skipDir(rel: string, name: string): boolean;
}

/**
 * Every entry below the open directory `dirFd` but directories, depth first in name order. Each
 * subdirectory is opened from its parent without following a link, so one swapped for a link
 * after the listing is skipped, not entered; links are reported, never followed.
 */
export function* walkEntries(dirFd: number, rel: string, limits: WalkLimits, depth = 0): Generator<WalkEntry> {
  const { entries } = readEntries(dirFd, Math.max(0, limits.budget.left) + 1);
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (--limits.budget.left < 0) return;
    const childRel = rel ? `${rel}/${entry.name}` : entry.name;
    if (!entry.isDirectory()) {
      yield { rel: childRel, dirFd, name: entry.name, entry };
      continue;
    }
    if (depth + 1 >= limits.maxDepth || limits.skipDir(childRel, entry.name)) continue;
    let child: number;
    try {
      child = openSync(at(dirFd, entry.name), DIR_FLAGS);
    } catch {
      continue; // gone, or swapped for a link since it was listed
    }
    try {
      yield* walkEntries(child, childRel, limits, depth + 1);
    } finally {
      closeSync(child);
    }
  }
}

/**
 * Writes `content` to `requested` inside the workdir and nowhere else, whatever a worker (or a
 * cloned repo) put there: every component is opened without following a link that leads out (see
 * OpenWorkdir.locate), a FIFO neither blocks the open (O_NONBLOCK) nor is written, and a hard
 * link to a file elsewhere is not changed. Nothing is truncated before all that holds.
 */
export async function writeConfined(workdir: string, requested: string, content: string): Promise<string> {
  return withWorkdir(workdir, (wd) => {
    const found = wd.locate(requested, { create: true, followLast: true });
    try {
      if (found.name === null) throw new Refusal(`${requested} is the working directory itself or a directory; name a file in it`);
      if (found.viaLink && !exists(found.dirFd, found.name)) throw new Refusal(`${requested} is a symlink to nowhere; refusing to follow it`);
      const rel = [...found.dir, found.name].join("/");
      let opened: ReturnType<typeof openRegularFile>;
      try {
        opened = openRegularFile(at(found.dirFd, found.name), constants.O_WRONLY | constants.O_CREAT, 0o644, rel);
      } catch (err) {
        if (errno(err) === "ELOOP") throw new Refusal(`${requested} became a symlink while it was opened; refusing to follow it`);
        if (err instanceof ServiceError && /not a regular file/.test(err.message)) throw new Refusal(`${requested} is not a regular file`);
        throw err;
      }
      const { fd, stat } = opened;
      try {
        if (stat.nlink > 1) throw new Refusal(`${requested} has other hard links; writing it would change a file elsewhere`);
        ftruncateSync(fd, 0);
        writeAll(fd, Buffer.from(content, "utf8"));
      } finally {
        closeSync(fd);
      }
      return rel;
    } finally {
      wd.done(found);
    }
  });
}

function exists(dirFd: number, name: string): boolean {
  try {
    lstatSync(at(dirFd, name));
    return true;
  } catch {
    return false;
  }
}

function writeAll(fd: number, buf: Buffer): void {
  for (let done = 0; done < buf.length; ) done += writeSync(fd, buf, done, buf.length - done, done);
}

/**
 * An answer file in the workdir (output.md, output-<job>.md), where pyCorral's callers read it. A refused or failed write is noted in
 * the job's output and costs the job nothing else: the answer is also in the job's result.
 */
export async function writeAnswerFile(workdir: string, name: string, text: string, note: (line: string) => void): Promise<void> {
  try {
    await writeConfined(workdir, name, text);
  } catch (err) {
    const why = err instanceof Refusal ? `refused: ${err.message}` : err instanceof Error ? err.message : String(err);
    note(`\n[corral] could not write ${name}: ${why}\n`);
  }
}
