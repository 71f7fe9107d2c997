import { type Job, plural, type WorktreeChange } from "@corral/shared";

/** Whether a worktree job's branch can still be read: while its folder is there, and once archived (its branch keeps every commit). */
export const readsChanges = (job: Pick<Job, "worktree">): boolean => job.worktree?.state === "active" || job.worktree?.state === "archived";

/**
 * The change in one line: its commits, then git's own summary (`3 files changed, 10 insertions(+),
 * 2 deletions(-)`), or how many files changed where the stat has none.
 */
export function changeSummary(change: WorktreeChange): string {
  const gitSays = change.stat
    .split("\n")
    .map((line) => line.trim())
    .find((line) => /^\d+ files? changed\b/.test(line));
  return `${plural(change.commits.length, "commit")} · ${gitSays ?? `${plural(change.files, "file")} changed`}`;
}

/**
 * Why a worktree job's files cannot be opened any more, once its worktree's folder is gone (merged,
 * discarded or archived), and where its change is instead; null while they can (or it ran in its workdir).
 */
export function worktreeFolderGone(job: Pick<Job, "worktree">): string | null {
  const wt = job.worktree;
  switch (wt?.state) {
    case "merged":
      return `The worktree's folder is gone: its change was merged into ${wt.base}.`;
    case "discarded":
      return `The worktree's folder is gone, and its branch ${wt.branch} was discarded with it.`;
    case "archived":
      return `The worktree's folder is gone: its change is on branch ${wt.branch} (see Changes).`;
    default:
      return null;
  }
}
