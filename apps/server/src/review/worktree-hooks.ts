import type { JobHooks } from "../jobs/deps.js";
import { commitLeftovers } from "../worktrees/git-worktree.js";

/**
 * A worktree job's end commits what its worker left uncommitted on its branch, after the files'
 * end is recorded: the branch is then the job's whole change, ready to review, merge or discard.
 * A commit that fails (a full disk, a repository git refuses) is told and loses nothing: the
 * changes stay in the worktree, and the change is still read with them.
 */
export function withWorktrees(inner: JobHooks, warn: (message: string) => void): JobHooks {
  return {
    ...inner,
    async ended(row, ran) {
      await inner.ended(row, ran);
      if (row.worktree?.state !== "active") return;
      await commitLeftovers(row.worktree, row.id, row.agent).catch((err: unknown) =>
        warn(`job ${row.id}: could not commit what it left in ${row.worktree?.path}: ${err instanceof Error ? err.message : String(err)}`),
      );
    },
  };
}
