import type { JobWorktree } from "@corral/shared";
import type { JobHooks } from "../jobs/deps.js";
import { commitLeftovers } from "../worktrees/git-worktree.js";
import { takeSandboxCommits } from "../worktrees/sandbox-commits.js";

/**
 * A worktree job's end commits what its worker left uncommitted on its branch, after the files'
 * end is recorded: the branch is then the job's whole change, ready to review, merge or discard.
 * A commit that fails (a full disk, a repository git refuses) is told and loses nothing: the
 * changes stay in the worktree, and the change is still read with them. Only a worktree on this
 * machine (`here`): a job refused because its worktree is another machine's commits nothing.
 * First, the commits a sandboxed worker made are taken onto the branch (worktrees/sandbox-commits.ts);
 * those that cannot be are told in the commit of its files.
 */
export function withWorktrees(
  inner: JobHooks,
  dataDir: string,
  warn: (message: string) => void,
  here: (wt: JobWorktree) => Promise<boolean>,
): JobHooks {
  return {
    ...inner,
    async ended(row, ran) {
      await inner.ended(row, ran);
      if (row.worktree?.state !== "active" || !(await here(row.worktree))) return;
      // Never a rejection: several callers do not await this hook, and a rejection there ends the server.
      const notTaken = await takeSandboxCommits(row.worktree, row.id, dataDir).catch(
        (err: unknown) => `its commits were not taken: ${err instanceof Error ? err.message : String(err)}`,
      );
      if (notTaken) warn(`job ${row.id}: ${notTaken}`);
      await commitLeftovers(row.worktree, row.id, row.agent, notTaken ?? undefined).catch((err: unknown) =>
        warn(`job ${row.id}: could not commit what it left in ${row.worktree?.path}: ${err instanceof Error ? err.message : String(err)}`),
      );
    },
  };
}
