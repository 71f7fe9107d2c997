import { constants } from "node:fs";
import { type FileHandle, lstat, mkdir, open, readlink, realpath } from "node:fs/promises";
import path from "node:path";
import { isInside } from "../lib/paths.js";

/** A path the workdir's confinement does not allow; the message says why. */
export class Refusal extends Error {}

/**
 * The workdir as the job resolved it when it started (a real path inside the allowed roots). If
 * it has since become a link, or sits under one, it may now lead anywhere: refuse it.
 */
async function rootOf(workdir: string): Promise<string> {
  const root = path.resolve(workdir);
  const real = await realpath(root);
  if (real !== root) throw new Refusal(`the working directory ${root} now resolves to ${real} (a symlink was put in its place)`);
  return root;
}

/**
 * Where `requested` really lands once symlinks are resolved, refusing anything outside the
 * workdir: `..`, absolute paths elsewhere, and symlinks (followed or dangling) that point out.
 * Components that do not exist yet cannot be links, so the deepest existing ancestor decides.
 */
export async function confine(workdir: string, requested: string): Promise<string> {
  if (typeof requested !== "string" || !requested.trim()) throw new Refusal("path is empty");
  if (requested.includes("\0")) throw new Refusal("path contains a NUL byte");
  const root = await rootOf(workdir);
  const target = path.resolve(root, requested);
  if (!isInside(target, root)) throw new Refusal(`${requested} is outside the working directory`);
  let existing = target;
  for (;;) {
    try {
      await lstat(existing);
      break;
    } catch {
      if (existing === root) break;
      existing = path.dirname(existing);
    }
  }
  let real: string;
  try {
    real = await realpath(existing);
  } catch {
    // It exists but does not resolve: a dangling symlink, whose target could be anywhere.
    throw new Refusal(`${requested} is a symlink to nowhere; refusing to follow it`);
  }
  const resolved = path.join(real, path.relative(existing, target));
  if (!isInside(resolved, root)) throw new Refusal(`${requested} resolves outside the working directory (through a symlink)`);
  return resolved;
}

/** Where an open file really is (Linux); null where /proc is not there to say. */
async function openedPath(fd: number): Promise<string | null> {
  try {
    return await readlink(`/proc/self/fd/${fd}`);
  } catch {
    return null;
  }
}

/**
 * Writes `content` to `requested` inside the workdir and nowhere else, whatever a worker (or a
 * cloned repo) put there: a symlink in the file's place is not followed (O_NOFOLLOW), a FIFO
 * neither blocks the open (O_NONBLOCK) nor is written, a hard link to a file elsewhere is not
 * changed, and the opened file must really lie in the workdir — so a parent swapped for a link
 * between the checks and the open is caught too. Nothing is truncated before all that holds.
 */
export async function writeConfined(workdir: string, requested: string, content: string): Promise<string> {
  const target = await confine(workdir, requested);
  const root = path.resolve(workdir);
  if (target === root) throw new Refusal(`${requested} is the working directory itself; name a file in it`);
  await mkdir(path.dirname(target), { recursive: true });
  // Parents created just now could have been swapped for links in between; check once more.
  if ((await confine(workdir, target)) !== target) throw new Refusal(`${requested} changed while it was being written`);
  let handle: FileHandle;
  try {
    handle = await open(target, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o644);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ELOOP") throw new Refusal(`${requested} is a symlink; refusing to follow it`);
    // A FIFO without a reader (or a socket) cannot be opened for writing without blocking.
    if (code === "ENXIO" || code === "EOPNOTSUPP") throw new Refusal(`${requested} is not a regular file`);
    throw err;
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new Refusal(`${requested} is not a regular file`);
    if (st.nlink > 1) throw new Refusal(`${requested} has other hard links; writing it would change a file elsewhere`);
    const opened = await openedPath(handle.fd);
    if (opened !== null && !isInside(opened, root)) throw new Refusal(`${requested} changed while it was being written (it led to ${opened})`);
    await handle.truncate(0);
    await handle.writeFile(content, "utf8");
  } finally {
    await handle.close();
  }
  return path.relative(root, target);
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
