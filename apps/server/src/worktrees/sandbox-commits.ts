import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, lstatSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { opendir } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { JobWorktree } from "@corral/shared";
import { git, type GitOptions } from "../lib/git.js";
import { PRIVATE_DIR_MODE } from "../lib/private-files.js";
import { openRegularFile, readAt } from "../lib/regular-file.js";
import { adminDirOf, assertMadeByCorral, branchHead, hasFolder, inRepository, inWorktree } from "./git-worktree.js";

/**
 * Commits by a worker in the sandbox, in its worktree. The repository's `.git` stays read-only
 * there: a worker that could write it would plant hooks and config that run as the user's own
 * git, and move any branch. So the worker's git writes a private folder of Corral's instead
 * (`<data dir>/worktree-git/<job id>`), which the sandbox mounts over the worktree's admin folder
 * (`.git/worktrees/<job id>`: HEAD, index, logs): its HEAD is the branch's commit, detached (a
 * branch is a ref in the repository's read-only `.git`), and new objects go to its `objects/`
 * (GIT_OBJECT_DIRECTORY), the repository's own read as alternates.
 *
 * When the attempt ends, Corral takes the worker's commits onto the job's branch, outside the
 * sandbox, treating everything in that folder as the worker's: a HEAD that descends from the
 * branch, its objects packed and re-hashed into the repository by `git index-pack --strict` (a
 * planted object cannot pass as another), checked connected, then the branch moved. Anything else
 * (history rewritten, a link or FIFO planted, objects git refuses) takes none: the files are then
 * committed as they are, the commit saying why, so nothing is lost.
 */

/** The worker's git folder of a job's attempt, on this machine. */
export const sandboxGitDirOf = (dataDir: string, jobId: string) => path.join(dataDir, "worktree-git", jobId);

/** What the sandbox adds for a worktree job: the private folder mounted over the admin folder, and git's variables. */
export interface SandboxGit {
  binds: readonly (readonly [from: string, to: string])[];
  env: Readonly<Record<string, string>>;
}

/** Past this many entries in the worker's object folder, its commits are not taken (its files still are). */
const MAX_OBJECT_FILES = 100_000;

/** Makes the worker's git folder for an attempt of job `jobId` in its worktree `wt`. */
export async function prepareSandboxGit(wt: JobWorktree, jobId: string, dataDir: string): Promise<SandboxGit> {
  assertMadeByCorral(wt);
  const own = sandboxGitDirOf(dataDir, jobId);
  const head = await branchHead(wt);
  if (!head) throw new Error(`its branch ${wt.branch} is gone; launch a new job`);
  // Made whole, then put in place: an earlier attempt's, whose commits its end took, is replaced.
  await discard(own);
  const making = `${own}.new`;
  await discard(making);
  mkdirSync(path.join(making, "objects", "pack"), { recursive: true, mode: PRIVATE_DIR_MODE });
  mkdirSync(path.join(making, "objects", "info"), { mode: PRIVATE_DIR_MODE });
  writeFileSync(path.join(making, "HEAD"), `${head}\n`);
  // Read inside the sandbox, where the folder is at the admin folder's place: the repository's git dir two levels up.
  writeFileSync(path.join(making, "commondir"), "../..\n");
  writeFileSync(path.join(making, "gitdir"), `${path.join(wt.path, ".git")}\n`);
  // An index of the branch's commit, Corral's own (not a copy of the worker's), so `git status` starts true.
  await git(wt.path, ["read-tree", head], inWorktree(wt, { GIT_INDEX_FILE: path.join(making, "index") }));
  renameSync(making, own);
  const admin = adminDirOf(wt);
  return {
    binds: [[own, admin]],
    env: { GIT_OBJECT_DIRECTORY: path.join(admin, "objects"), GIT_ALTERNATE_OBJECT_DIRECTORIES: path.join(wt.gitDir, "objects") },
  };
}

/**
 * At an attempt's end: moves the job's branch to the commits the worker made in the sandbox,
 * and removes its git folder. Answers why none were taken when it made some that could not be,
 * null otherwise (none made, or all taken, or no sandbox).
 */
export async function takeSandboxCommits(wt: JobWorktree, jobId: string, dataDir: string): Promise<string | null> {
  const own = sandboxGitDirOf(dataDir, jobId);
  if (!lstatSync(own, { throwIfNoEntry: false })?.isDirectory()) return null;
  let scratch: string | undefined;
  try {
    assertMadeByCorral(wt);
    const branch = await branchHead(wt);
    const theirs = workerHead(own);
    if (!hasFolder(wt) || !branch || theirs === null || theirs === branch) return null;
    const objects = path.join(own, "objects");
    const planted = await strangeEntry(objects);
    if (planted) return `its commits were not taken: ${planted}`;
    // Alternates would have git read other folders as objects; a commit-graph could lie about parents.
    await discard(path.join(objects, "info"));
    const worker: GitOptions = {
      env: { GIT_DIR: wt.gitDir, GIT_OBJECT_DIRECTORY: objects, GIT_ALTERNATE_OBJECT_DIRECTORIES: path.join(wt.gitDir, "objects") },
    };
    const repository = inRepository(wt.repo, wt.gitDir);
    const descends = async (at: GitOptions) =>
      (await git(wt.repo, ["merge-base", "--is-ancestor", branch, theirs], { ...at, okCodes: [1] })).code === 0;
    if (!(await descends(worker))) {
      return `its commits were not taken: its HEAD ${theirs.slice(0, 12)} does not descend from ${wt.branch} (${branch.slice(0, 12)}); history is never rewritten`;
    }
    scratch = mkdtempSync(path.join(tmpdir(), "corral-take-"));
    const list = path.join(scratch, "objects");
    writeFileSync(list, (await git(wt.repo, ["rev-list", "--objects", `${branch}..${theirs}`, "--"], worker)).stdout);
    const pack =
      // One pack, whatever the repository's pack.packSizeLimit (which would split it and print several names).
      (
        await git(wt.repo, ["-c", "pack.packSizeLimit=0", "pack-objects", "-q", path.join(scratch, "pack")], { ...worker, stdinFile: list })
      ).stdout.trim();
    // Into the repository, every object hashed again from its content and checked (git fsck's checks).
    await git(wt.repo, ["index-pack", "--strict", "--stdin"], { ...repository, stdinFile: path.join(scratch, `pack-${pack}.pack`) });
    // Again with the repository's objects alone: the branch descends, and every object is there.
    if (!(await descends(repository))) throw new Error(`${theirs} does not descend from ${branch}`);
    await git(wt.repo, ["rev-list", "--objects", "--quiet", `${branch}..${theirs}`, "--"], repository);
    const message = `corral: the commits of job ${jobId}, made in the sandbox`;
    await git(wt.repo, ["update-ref", "--no-deref", "-m", message, `refs/heads/${wt.branch}`, theirs, branch], repository);
    // The worktree's index follows its branch again (its files stay as they are).
    await git(wt.path, ["read-tree", "HEAD"], inWorktree(wt));
    return null;
  } catch (err) {
    return `its commits were not taken: ${err instanceof Error ? err.message : String(err)}`;
  } finally {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
    await discard(own);
  }
}

/**
 * Removes a folder the worker wrote, never throwing and never holding the event loop: moved aside
 * at once (the next attempt's folder can be made), then removed by GNU chmod and rm in their own
 * process. They walk by file descriptor, so a tree deeper than PATH_MAX goes too, and folders the
 * worker made unwritable are made writable first (fs.rmSync fails on both, and blocks on a
 * million files). Links are removed, never followed.
 */
async function discard(dir: string): Promise<void> {
  const gone = `${dir}.gone-${randomBytes(6).toString("hex")}`;
  try {
    renameSync(dir, gone);
  } catch {
    return; // Not there (or not movable: then nothing of it is read again either).
  }
  const run = (command: string, args: string[]) =>
    new Promise<void>((resolve) => execFile(command, args, { timeout: 10 * 60_000, killSignal: "SIGKILL" }, () => resolve()));
  await run("chmod", ["-R", "u+rwX", "--", gone]);
  await run("rm", ["-rf", "--", gone]);
}

/** The commit the worker's HEAD names; null when it names a branch (none of which it could move) or nothing readable. */
function workerHead(own: string): string | null {
  try {
    const file = openRegularFile(path.join(own, "HEAD"));
    try {
      return /^([0-9a-f]{40}|[0-9a-f]{64})\n?$/.exec(readAt(file.fd, 0, 80).toString("latin1"))?.[1] ?? null;
    } finally {
      closeSync(file.fd);
    }
  } catch {
    return null;
  }
}

/** What, in the worker's object folder, is neither a folder nor a regular file (a link, a FIFO), or too many files; null if nothing. */
async function strangeEntry(objects: string): Promise<string | null> {
  let entries = 0;
  const walk = async (dir: string, depth: number): Promise<string | null> => {
    if (!lstatSync(dir, { throwIfNoEntry: false })?.isDirectory()) return `${path.relative(path.dirname(objects), dir)} is not a folder`;
    // Git's object folder is two levels deep (pack/, info/, xx/): anything deeper is not git's.
    if (depth > 3) return `${path.relative(path.dirname(objects), dir)} is deeper than an object folder's`;
    // Read an entry at a time, stopping at the limit: never a whole folder of millions into memory at once.
    for await (const entry of await opendir(dir)) {
      const at = path.join(dir, entry.name);
      if (++entries > MAX_OBJECT_FILES) return `more than ${MAX_OBJECT_FILES} entries in its object folder`;
      if (entry.isDirectory()) {
        const found = await walk(at, depth + 1);
        if (found) return found;
      } else if (!entry.isFile()) return `${path.relative(path.dirname(objects), at)} is not a regular file`;
    }
    return null;
  };
  return walk(objects, 0);
}
