import { existsSync, lstatSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { rm, rmdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { DiscardResult, JobDiff, JobWorktree, MergeResult, WorktreeChange } from "@corral/shared";
import { badInput, ServiceError } from "../lib/errors.js";
import { git, GitError, type GitOptions, type GitResult } from "../lib/git.js";

/**
 * A job's git worktree: a new worktree of its workdir's repository on branch `corral/<job id>`,
 * made beside the repository, in `<parent>/.corral-worktrees/<repository>/<job id>`: on the same
 * file system (a worktree shares the repository's objects), under the same workdir root as the
 * repository (so it passes the launch's workdir checks), where a user can `cd` to it; not in the
 * data dir, which the sandbox hides from workers.
 *
 * Every git call goes through lib/git.ts (no hooks, filters or config-named programs), and a
 * worktree's own `.git` file, which its worker can rewrite, is never followed: calls name the
 * repository's git dir and the worktree's path themselves.
 */

/** Who commits what a worker left uncommitted, and merges. */
const CORRAL = {
  GIT_AUTHOR_NAME: "Corral",
  GIT_AUTHOR_EMAIL: "corral@localhost",
  GIT_COMMITTER_NAME: "Corral",
  GIT_COMMITTER_EMAIL: "corral@localhost",
};

/** A base a launch may name: a branch, tag or commit, nothing git could read as an option or a range. */
const BASE_REF = /^(?!-)(?!.*\.\.)(?!.*[~^:?*[\\\s@{])[A-Za-z0-9._/-]{1,200}$/;

/** A diff shown whole up to this size; past it, cut, saying so. */
export const MAX_DIFF_BYTES = 2 * 1024 * 1024;

export const branchOf = (jobId: string) => `corral/${jobId}`;

/** Each repository's last change to its list of worktrees (by git dir), which the next waits for. */
const listChanges = new Map<string, Promise<unknown>>();

/**
 * Runs `change` to the repository's list of worktrees (`.git/worktrees`) after the one before it
 * has ended: git reads every entry of that list as it adds or prunes one, and fails reading one
 * that another `worktree add` is still writing ("failed to read …/commondir"), so three launches
 * at once on one repository would fail at random.
 */
function inWorktreeList<T>(gitDir: string, change: () => Promise<T>): Promise<T> {
  const run = (listChanges.get(gitDir) ?? Promise.resolve()).then(change);
  const settled = run.catch(() => undefined);
  listChanges.set(gitDir, settled);
  void settled.then(() => {
    if (listChanges.get(gitDir) === settled) listChanges.delete(gitDir);
  });
  return run;
}

const pruneWorktrees = (top: string, gitDir: string) => inWorktreeList(gitDir, () => git(top, ["worktree", "prune"], inRepository(top, gitDir)));

/** Where job `jobId`'s worktree of the repository at `top` goes. */
export const worktreePathOf = (top: string, jobId: string) => path.join(path.dirname(top), ".corral-worktrees", path.basename(top), jobId);

/** The repository `workdir` is in: its top level and its (common) git dir, both absolute. */
export async function repositoryOf(workdir: string): Promise<{ top: string; gitDir: string }> {
  const found = await git(workdir, ["rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir"]).catch(() => null);
  const [top, gitDir] = found?.stdout.trim().split("\n") ?? [];
  if (!top || !gitDir) {
    throw badInput(`${workdir} is not in a git repository; a worktree job needs one (run git init there), or launch without worktree`, "workdir");
  }
  // Only a repository's own folder, whose .git is a real directory: a linked worktree's .git
  // file (another job's, which its worker can rewrite) could point git at a repository the worker
  // built, whose config runs its programs.
  const dotGit = lstatSync(path.join(top, ".git"), { throwIfNoEntry: false });
  if (!dotGit?.isDirectory() || realpathSync(path.join(top, ".git")) !== realpathSync(gitDir)) {
    throw badInput(`${top} is a linked worktree, not a repository's own folder; launch in the repository it belongs to`, "workdir");
  }
  return { top, gitDir };
}

/** Git's variables for a command on the repository's own folder: its git dir and tree named, nothing discovered. */
export const inRepository = (top: string, gitDir: string, extra: Record<string, string> = {}): GitOptions => ({
  env: { GIT_DIR: gitDir, GIT_WORK_TREE: top, ...extra },
});

/** The worktree's admin folder in the repository's git dir: its HEAD, index and logs. */
export const adminDirOf = (wt: JobWorktree) => path.join(wt.gitDir, "worktrees", path.basename(wt.path));

/**
 * Git's variables for a command on the worktree: its git dir, common dir and tree named, so
 * neither its `.git` file nor its admin folder's `commondir` (both within a worker's reach) is followed.
 */
export const inWorktree = (wt: JobWorktree, extra: Record<string, string> = {}): GitOptions => ({
  env: { GIT_DIR: adminDirOf(wt), GIT_COMMON_DIR: wt.gitDir, GIT_WORK_TREE: wt.path, ...extra },
});

/**
 * Why no job can run in the worktree now: its folder is gone (deleted by hand, or archived). A job
 * started there would find an empty folder (made again as its workdir), and its end would commit
 * the removal of every file on its branch. Null while the folder is there.
 */
export function worktreeMissing(wt: JobWorktree): string | null {
  if (lstatSync(wt.path, { throwIfNoEntry: false })?.isDirectory()) return null;
  return `its worktree ${wt.path} is gone (deleted by hand?); its branch ${wt.branch} keeps what was committed there: launch a new job with base ${wt.branch}`;
}

/** The worktree's folder is there to read (not archived, merged, discarded or deleted by hand). */
export const hasFolder = (wt: JobWorktree) => wt.state === "active" && existsSync(wt.path);

/** The job's branch as a full ref: a tag of the same name never wins. */
const branchRef = (wt: JobWorktree) => `refs/heads/${wt.branch}`;

/** The commit the job's branch points at, or null once it is gone. */
export async function branchHead(wt: JobWorktree): Promise<string | null> {
  const found = await git(wt.repo, ["rev-parse", "--verify", "--quiet", `${branchRef(wt)}^{commit}`], {
    ...inRepository(wt.repo, wt.gitDir),
    okCodes: [1],
  });
  return found.code === 0 ? found.stdout.trim() : null;
}

function assertBaseName(base: string | undefined): void {
  if (base !== undefined && !BASE_REF.test(base)) {
    throw badInput(`base ${JSON.stringify(base)} is not a branch, tag or commit name; give one like main or v1.2`, "base");
  }
}

/**
 * The record of a worktree a runner will make when it takes the job (createWorktree on its
 * machine): its branch and base are the launch's, checked as createWorktree checks them.
 */
export function pendingWorktree(jobId: string, base: string | undefined): JobWorktree {
  assertBaseName(base);
  return { repo: "", gitDir: "", path: "", branch: branchOf(jobId), base: base ?? "HEAD", baseCommit: "", state: "pending" };
}

/**
 * A worktree record as createWorktree makes it: its folder at its fixed place beside its
 * repository and named by its job, on the job's branch, its git dir the repository's own. One
 * that is not (written into the registry by other hands than Corral's) is refused before git or
 * the file system is touched: no record makes Corral remove, commit in or run git on another place.
 */
export function assertMadeByCorral(wt: JobWorktree): void {
  const id = path.basename(wt.path);
  const plain = (p: string) => path.isAbsolute(p) && path.normalize(p) === p && p !== path.sep && !p.endsWith(path.sep);
  const ours =
    /^[a-z0-9]{1,32}$/.test(id) &&
    plain(wt.repo) &&
    wt.gitDir === path.join(wt.repo, ".git") &&
    wt.branch === branchOf(id) &&
    wt.path === worktreePathOf(wt.repo, id);
  if (!ours) {
    throw new ServiceError(
      `the worktree record ${JSON.stringify(wt.path)} is not one Corral made; nothing was done to it`,
      409,
      "job_id",
      undefined,
      "conflict",
    );
  }
}

/** Creates the job's worktree and branch from `base` (default: HEAD); the record a job keeps of it. */
export async function createWorktree(workdir: string, jobId: string, base: string | undefined): Promise<JobWorktree> {
  assertBaseName(base);
  const { top, gitDir } = await repositoryOf(workdir);
  const baseRef = base ?? "HEAD";
  const resolved = await git(top, ["rev-parse", "--verify", "--quiet", "--end-of-options", `${baseRef}^{commit}`], inRepository(top, gitDir)).catch(
    () => null,
  );
  if (!resolved) {
    throw badInput(
      base === undefined
        ? `${top} has no commit yet; commit once, then launch with worktree`
        : `base ${base} is not a branch, tag or commit of ${top}`,
      "base",
    );
  }
  // Named as a merge will need it: HEAD as the branch it is on, refs/heads/x as x.
  const baseName =
    base === undefined || base === "HEAD"
      ? (await git(top, ["symbolic-ref", "--quiet", "--short", "HEAD"], { ...inRepository(top, gitDir), okCodes: [1] })).stdout.trim() || "HEAD"
      : base.replace(/^refs\/heads\//, "");
  const wtPath = worktreePathOf(top, jobId);
  mkdirSync(path.dirname(wtPath), { recursive: true });
  // Made without a checkout, which then runs in the new worktree's own context: a config included
  // only there (includeIf onbranch:corral/**) names filters the worktree add's list would not see.
  await inWorktreeList(gitDir, () =>
    git(top, ["worktree", "add", "--quiet", "--no-checkout", "-b", branchOf(jobId), "--", wtPath, resolved.stdout.trim()], inRepository(top, gitDir)),
  ).catch(async (err: unknown) => {
    if (!(err instanceof GitError)) throw err;
    // The empty folder git made before it refused goes (never one that was there: git refuses those).
    await rmdir(wtPath).catch(() => undefined);
    await pruneWorktrees(top, gitDir).catch(() => undefined);
    throw new ServiceError(`git could not make the worktree of ${top}: ${err.message}`, 409, "workdir", undefined, "conflict");
  });
  const made: JobWorktree = {
    repo: top,
    gitDir,
    path: wtPath,
    branch: branchOf(jobId),
    base: baseName,
    baseCommit: resolved.stdout.trim(),
    state: "active",
  };
  try {
    if (!existsSync(path.join(gitDir, "worktrees", jobId))) throw new Error(`git named the worktree's admin folder other than ${jobId}`);
    await git(wtPath, ["read-tree", "-u", "--reset", "HEAD"], inWorktree(made));
  } catch (err) {
    await removeWorktree(made).catch(() => undefined);
    throw err;
  }
  return made;
}

/**
 * Commits what the worker left uncommitted on its branch (Corral as author, the job in the
 * message), so the branch is the job's whole change. Nothing to commit: nothing happens. `why`: a
 * paragraph the message adds (why the worker's own commits were not taken, say).
 */
export async function commitLeftovers(wt: JobWorktree, jobId: string, agent: string, why?: string): Promise<boolean> {
  assertMadeByCorral(wt);
  if (!hasFolder(wt)) return false;
  // Through a fresh index of the files as they are, as the diff shows them: the worktree's own
  // index is the worker's, which could hold staged content marked unchanged on disk.
  const head = (await git(wt.path, ["rev-parse", "--verify", "HEAD"], inWorktree(wt))).stdout.trim();
  const tree = await withEverything(wt, async (opts) => (await git(wt.path, ["write-tree"], opts)).stdout.trim());
  if (tree === (await git(wt.path, ["rev-parse", `${head}^{tree}`], inWorktree(wt))).stdout.trim()) return false;
  const message = `corral: what job ${jobId} (${agent}) left uncommitted`;
  const paragraphs = why === undefined ? ["-m", message] : ["-m", message, "-m", why];
  const commit = (await git(wt.path, ["commit-tree", tree, "-p", head, ...paragraphs], inWorktree(wt, CORRAL))).stdout.trim();
  await git(wt.path, ["update-ref", "--no-deref", "-m", message, `refs/heads/${wt.branch}`, commit, head], inWorktree(wt));
  // The worktree's index follows its branch again (its files stay as they are).
  await git(wt.path, ["read-tree", "HEAD"], inWorktree(wt));
  return true;
}

/**
 * The change of a job's branch against its base, its commits and `git diff --stat`: uncommitted
 * work included while the worktree is there (read through a temporary index, so the worktree's
 * own is untouched); the branch alone once its folder is gone (archived, or deleted by hand).
 */
export async function changeOf(wt: JobWorktree): Promise<WorktreeChange> {
  assertMadeByCorral(wt);
  return (await withReader(wt, (read) => changeFrom(wt, read))) ?? { commits: [], stat: "", files: 0, head: "" };
}

/** The unified diff of the branch (uncommitted work included) against its base, one path's or all, cut at MAX_DIFF_BYTES. */
export async function diffOf(wt: JobWorktree, file?: string): Promise<JobDiff> {
  assertMadeByCorral(wt);
  assertDiffPath(file);
  return (await withReader(wt, (read) => diffFrom(wt, read, file))) ?? unreadable(wt);
}

/** The change and the diff together, read through one temporary index (the panel's Changes card, `GET /diff`). */
export async function changesOf(wt: JobWorktree, file?: string): Promise<JobDiff & { change: WorktreeChange }> {
  assertMadeByCorral(wt);
  assertDiffPath(file);
  const both = await withReader(wt, async (read) => ({ change: await changeFrom(wt, read), ...(await diffFrom(wt, read, file)) }));
  return both ?? unreadable(wt);
}

function assertDiffPath(file: string | undefined): void {
  if (file !== undefined && (file.startsWith("-") || file.includes("\0") || path.isAbsolute(file) || file.split("/").includes(".."))) {
    throw badInput(`path ${JSON.stringify(file)} is not a path inside the repository; give one like src/app.ts`, "path");
  }
}

function unreadable(wt: JobWorktree): never {
  throw new ServiceError(
    wt.state === "merged"
      ? `branch ${wt.branch} was merged into ${wt.base}; its change is in git's history`
      : `branch ${wt.branch} was ${wt.state === "discarded" ? "discarded" : "deleted"}; its change is gone`,
    409,
    "job_id",
  );
}

async function changeFrom(wt: JobWorktree, read: Reader): Promise<WorktreeChange> {
  const log = await git(wt.repo, ["log", "--format=%h %s", `${wt.baseCommit}..${read.head}`, "--"], inRepository(wt.repo, wt.gitDir));
  const stat = await read.diff(["--stat=200", "--summary"]);
  const files = await read.diff(["--name-only", "-z"]);
  return {
    commits: log.stdout.split("\n").filter(Boolean).slice(0, 200),
    stat: stat.stdout.trimEnd(),
    files: files.stdout.split("\0").filter(Boolean).length,
    head: read.head,
  };
}

async function diffFrom(wt: JobWorktree, read: Reader, file: string | undefined): Promise<JobDiff> {
  const out = await read.diff(["--find-renames"], file === undefined ? [] : [`:(literal)${file}`], MAX_DIFF_BYTES);
  if (!out.cut) return { diff: out.stdout, truncated: false };
  // Cut where a line ends: a half line (or half a character) is not shown.
  const whole = out.stdout.slice(0, Math.max(0, out.stdout.lastIndexOf("\n") + 1));
  return { diff: `${whole}[… cut at ${MAX_DIFF_BYTES} bytes: the rest is in branch ${wt.branch}]\n`, truncated: true };
}

/** The commit the change is read at, and `git diff <options>` against the base, of `paths` or all. */
interface Reader {
  head: string;
  diff(options: string[], paths?: string[], cutAt?: number): Promise<GitResult>;
}

/**
 * Runs `use` with a reader of the job's change: the worktree's files while its folder is there (one
 * temporary index for all its reads), else its branch; null once the branch is gone too, or the
 * worktree was merged or discarded.
 */
async function withReader<T>(wt: JobWorktree, use: (read: Reader) => Promise<T>): Promise<T | null> {
  if (wt.state === "merged" || wt.state === "discarded") return null;
  if (hasFolder(wt)) {
    const head = (await git(wt.path, ["rev-parse", "--verify", "HEAD"], inWorktree(wt))).stdout.trim();
    return withEverything(wt, (opts) =>
      use({
        head,
        diff: (options, paths = [], cutAt) => git(wt.path, ["diff", "--cached", ...options, wt.baseCommit, "--", ...paths], { ...opts, cutAt }),
      }),
    );
  }
  const head = await branchHead(wt);
  if (!head) return null;
  return use({
    head,
    diff: (options, paths = [], cutAt) =>
      git(wt.repo, ["diff", ...options, wt.baseCommit, head, "--", ...paths], { ...inRepository(wt.repo, wt.gitDir), cutAt }),
  });
}

/** Runs `read` with a temporary index holding the worktree's files as they are now. */
async function withEverything<T>(wt: JobWorktree, read: (opts: GitOptions) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(path.join(tmpdir(), "corral-index-"));
  try {
    const opts = inWorktree(wt, { GIT_INDEX_FILE: path.join(dir, "index") });
    await git(wt.path, ["read-tree", "HEAD"], opts);
    // A gitlink (a repository in the worktree, a worker's own, committed as one) stays as it is:
    // `add` would run `git status` inside it, where that repository's own config counts and names
    // filters the overrides never saw (git keeps our settings, not our list, for it). A new one is
    // added by its HEAD alone, which runs nothing.
    const staged = await git(wt.path, ["ls-files", "--stage", "-z"], opts);
    const gitlinks = staged.stdout.split("\0").filter((entry) => entry.startsWith("160000 "));
    const pathspecs = path.join(dir, "pathspecs");
    writeFileSync(pathspecs, [".", ...gitlinks.map((entry) => `:(exclude,literal)${entry.slice(entry.indexOf("\t") + 1)}`)].join("\0"));
    await git(wt.path, ["add", "--all", `--pathspec-from-file=${pathspecs}`, "--pathspec-file-nul"], opts);
    return await read(opts);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Merges the job's branch into its base branch: a fast-forward when the base has not moved, else a
 * merge commit (Corral as author). A conflict is refused with the files, leaving nothing
 * half-merged. Where the base is checked out (the repository's own worktree, usually), the merge
 * happens there and needs it clean; elsewhere the branch ref alone moves (git merge-tree).
 * `expectedHead`: the commit whose diff was reviewed; the merge refuses a branch that moved since.
 */
export async function mergeWorktree(wt: JobWorktree, jobId: string, agent: string, expectedHead?: string): Promise<MergeResult> {
  assertMadeByCorral(wt);
  const into = wt.base;
  const isBranch =
    (await git(wt.repo, ["show-ref", "--verify", "--quiet", `refs/heads/${into}`], { ...inRepository(wt.repo, wt.gitDir), okCodes: [1] })).code === 0;
  if (!isBranch) {
    throw new ServiceError(
      `the job's base ${into} is not a branch; merge ${wt.branch} yourself (git merge ${wt.branch}), or discard it`,
      409,
      "job_id",
    );
  }
  await commitLeftovers(wt, jobId, agent);
  // A worktree folder deleted by hand still holds its branch in git's list until pruned.
  if (!hasFolder(wt)) await pruneWorktrees(wt.repo, wt.gitDir);
  if (!(await branchHead(wt))) throw new ServiceError(`branch ${wt.branch} is gone; there is nothing to merge`, 409, "job_id");
  const checkedOut = await checkedOutAt(wt.repo, wt.gitDir, into);
  const message = `Merge ${wt.branch} (job ${jobId}, ${agent})`;
  // What is merged is the branch's commit, named by its full ref (a tag of the same name never wins).
  const head = (await git(wt.repo, ["rev-parse", "--verify", `${branchRef(wt)}^{commit}`], inRepository(wt.repo, wt.gitDir))).stdout.trim();
  // What was reviewed is what merges: a branch that moved since (a process still writing there) is refused.
  if (expectedHead !== undefined && head !== expectedHead) {
    throw new ServiceError(
      `${wt.branch} moved since its diff was read (it is at ${head.slice(0, 12)}, the diff was of ${expectedHead.slice(0, 12)}); read the diff again, then merge`,
      409,
      "head",
      undefined,
      "conflict",
    );
  }
  if (checkedOut) {
    // Only in the repository's own folder, its git dir named: another worktree's .git file is its worker's.
    if (checkedOut !== wt.repo) {
      throw new ServiceError(
        `${into} is checked out in ${checkedOut}, another worktree; merge ${wt.branch} there yourself, or check ${into} out in ${wt.repo}`,
        409,
        "job_id",
        undefined,
        "conflict",
      );
    }
    await repositoryOf(wt.repo);
    const here = inRepository(wt.repo, wt.gitDir);
    const dirty = (await git(wt.repo, ["status", "--porcelain", "--untracked-files=no", "--ignore-submodules=all"], here)).stdout.trim();
    if (dirty) {
      throw new ServiceError(`${wt.repo} has uncommitted changes on ${into}; commit or stash them, then merge`, 409, "job_id", undefined, "conflict");
    }
    const before = (await git(wt.repo, ["rev-parse", "HEAD"], here)).stdout.trim();
    try {
      await git(wt.repo, ["merge", "--no-edit", "--no-verify", "-m", message, head], inRepository(wt.repo, wt.gitDir, CORRAL));
    } catch (err) {
      const conflicted = (await git(wt.repo, ["diff", "--name-only", "--diff-filter=U"], here).catch(() => ({ stdout: "" }))).stdout
        .split("\n")
        .filter(Boolean);
      await git(wt.repo, ["merge", "--abort"], here).catch(() => git(wt.repo, ["reset", "--merge"], here));
      throw conflict(wt, into, conflicted, err);
    }
    const after = (await git(wt.repo, ["rev-parse", "HEAD"], here)).stdout.trim();
    const parents = (await git(wt.repo, ["rev-list", "--parents", "-n", "1", after], here)).stdout.trim().split(" ").length - 1;
    return { into, commit: after, fastForward: after !== before && parents < 2 };
  }
  const at = inRepository(wt.repo, wt.gitDir);
  const base = (await git(wt.repo, ["rev-parse", "--verify", `refs/heads/${into}^{commit}`], at)).stdout.trim();
  if ((await git(wt.repo, ["merge-base", "--is-ancestor", base, head], { ...at, okCodes: [1] })).code === 0) {
    await git(wt.repo, ["update-ref", "-m", message, `refs/heads/${into}`, head, base], at);
    return { into, commit: head, fastForward: true };
  }
  const tree = await git(wt.repo, ["merge-tree", "--write-tree", "--name-only", "--no-messages", base, head], { ...at, okCodes: [1] });
  const [treeId, ...files] = tree.stdout.split("\n").filter(Boolean);
  if (files.length > 0 || !treeId) throw conflict(wt, into, files, null);
  const commit = (
    await git(wt.repo, ["commit-tree", treeId, "-p", base, "-p", head, "-m", message], inRepository(wt.repo, wt.gitDir, CORRAL))
  ).stdout.trim();
  await git(wt.repo, ["update-ref", "-m", message, `refs/heads/${into}`, commit, base], at);
  return { into, commit, fastForward: false };
}

function conflict(wt: JobWorktree, into: string, files: string[], err: unknown): ServiceError {
  const named = files.length
    ? `: ${files.slice(0, 20).join(", ")}${files.length > 20 ? ", …" : ""}`
    : err instanceof Error
      ? ` (${err.message})`
      : "";
  return new ServiceError(
    `${wt.branch} does not merge cleanly into ${into}${named}; nothing was merged. Resolve it in ${wt.path} (git merge ${into}), then merge again, or discard it`,
    409,
    "job_id",
    undefined,
    "conflict",
  );
}

/** The worktree where `branch` is checked out, if any. */
async function checkedOutAt(repo: string, gitDir: string, branch: string): Promise<string | null> {
  const { stdout } = await git(repo, ["worktree", "list", "--porcelain", "-z"], inRepository(repo, gitDir));
  let at: string | null = null;
  for (const line of stdout.split("\0")) {
    if (line.startsWith("worktree ")) at = line.slice("worktree ".length);
    else if (line === `branch refs/heads/${branch}`) return at;
  }
  return null;
}

/**
 * Removes the job's worktree and branch, answering what went with them: the branch's commits its
 * base does not have, and where it pointed (git keeps that commit a while: it can be brought back).
 */
export async function discardWorktree(wt: JobWorktree): Promise<DiscardResult> {
  assertMadeByCorral(wt);
  const head = await branchHead(wt);
  const at = inRepository(wt.repo, wt.gitDir);
  const baseBranch = (await git(wt.repo, ["show-ref", "--verify", "--quiet", `refs/heads/${wt.base}`], { ...at, okCodes: [1] })).code === 0;
  const since = baseBranch ? `refs/heads/${wt.base}` : wt.baseCommit;
  const commits = head ? (await git(wt.repo, ["log", "--format=%h %s", `${since}..${head}`, "--"], at)).stdout.split("\n").filter(Boolean) : [];
  await removeWorktree(wt);
  return { branch: wt.branch, commits: commits.slice(0, 200), head };
}

/**
 * Removes the worktree's folder of a job left unreviewed, keeping its branch: what the worker left
 * uncommitted is committed first, so every change stays in the branch (merge or discard it later).
 */
export async function archiveWorktree(wt: JobWorktree, jobId: string, agent: string): Promise<void> {
  assertMadeByCorral(wt);
  await commitLeftovers(wt, jobId, agent);
  await removeFolder(wt);
}

/** Removes the job's worktree and its branch (the branch's unmerged commits go with it: the caller asked). */
export async function removeWorktree(wt: JobWorktree): Promise<void> {
  assertMadeByCorral(wt);
  await removeFolder(wt);
  await git(wt.repo, ["branch", "-D", "--", wt.branch], inRepository(wt.repo, wt.gitDir)).catch((err: unknown) => {
    if (!(err instanceof GitError && /not found/.test(err.stderr))) throw err;
  });
}

/** Removes the job's worktree folder, and git's record of it; the branch stays. */
async function removeFolder(wt: JobWorktree): Promise<void> {
  const folder = lstatSync(wt.path, { throwIfNoEntry: false });
  if (folder) {
    // The folder Corral made, itself: a link put in its place would remove another.
    if (!folder.isDirectory()) {
      throw new ServiceError(
        `${wt.path} is no longer the worktree Corral made (replaced by a link); remove it yourself`,
        409,
        "job_id",
        undefined,
        "conflict",
      );
    }
    // Removed here, not by `git worktree remove`: git picks the folder by its admin folder's `gitdir`
    // file and checks it by the worktree's `.git` file, both within a worker's reach (re-pointed
    // elsewhere, a FIFO that never ends, a directory git refuses). rm removes a link, not what it
    // points at (as git would, a directory swapped for one mid-walk by a process still writing there is followed).
    const removed = (at: string) =>
      rm(at, { recursive: true, force: true }).catch((err: unknown) => {
        const why = err instanceof Error ? err.message : String(err);
        throw new ServiceError(`${wt.path} could not be removed (${why}); remove it yourself`, 409, "job_id", undefined, "conflict");
      });
    await removed(wt.path);
    // Git's record of it, by the name Corral gave it, whatever its files say.
    await inWorktreeList(wt.gitDir, () => removed(adminDirOf(wt)));
  }
  await pruneWorktrees(wt.repo, wt.gitDir);
}
