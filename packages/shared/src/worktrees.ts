import { z } from "zod";

/**
 * A job run in a git worktree of its workdir's repository (`worktree: true` at launch): where,
 * on which branch, from what, and whether it is still there. A runner's job has its worktree made
 * on the runner's machine when the runner takes the job (`pending` until then: no path yet).
 */
export const JobWorktreeSchema = z.object({
  /** The repository's top level (its own worktree); empty while `pending`. */
  repo: z.string(),
  /** The repository's git dir, which every worktree shares. */
  gitDir: z.string(),
  /** The job's worktree: its workdir. */
  path: z.string(),
  /** `corral/<job id>`. */
  branch: z.string(),
  /** What it branched from, as named (a branch, tag or commit; `HEAD` when detached), and merges into. */
  base: z.string(),
  baseCommit: z.string(),
  /**
   * `pending` until the runner that takes the job makes it (the job's workdir names the
   * repository); `active` while the worktree is there; `archived` once it was removed unreviewed after
   * CORRAL_WORKTREE_DAYS (its branch keeps every commit: diff, merge and discard still work);
   * `merged` and `discarded` once worktree and branch are gone.
   */
  state: z.enum(["pending", "active", "archived", "merged", "discarded"]),
  /**
   * The runner (GET /api/runners) on whose machine the worktree is, which its diff, merge and
   * discard go through; absent when it is on the server's machine.
   */
  runner: z.string().optional(),
  /** When it was archived, merged or discarded. */
  changedAt: z.number().optional(),
  /** The commit its branch pointed at then (after a discard, `git branch <branch> <head>` brings it back while git keeps it). */
  head: z.string().nullable().optional(),
});
export type JobWorktree = z.infer<typeof JobWorktreeSchema>;

/** A worktree job's change against its base, uncommitted work included. */
export const WorktreeChangeSchema = z.object({
  /** The worker's commits and Corral's, `<short sha> <subject>`, newest first. */
  commits: z.array(z.string()),
  /** `git diff --stat --summary` against the base. */
  stat: z.string(),
  /** How many files changed. */
  files: z.number().int(),
  /** The commit the change was read at (the branch's head): a merge given it refuses a branch that moved since. */
  head: z.string(),
});
export type WorktreeChange = z.infer<typeof WorktreeChangeSchema>;

/** `corral_diff`: the unified diff against the base (binary files named, not shown). */
export const JobDiffSchema = z.object({
  diff: z.string(),
  /** Cut at 2 MiB; the rest is in the branch. */
  truncated: z.boolean(),
});

/** `GET /api/jobs/:id/diff`: the worktree job's diff, with the worktree and its change (commits, stat). */
export const JobChangesSchema = JobDiffSchema.extend({ worktree: JobWorktreeSchema, change: WorktreeChangeSchema });
export type JobChanges = z.infer<typeof JobChangesSchema>;

export const DiffQuerySchema = z.object({ path: z.string().min(1).max(4096).optional() }).strict();

/** `POST /api/jobs/:id/merge?head=`: merge only if the branch is still at the commit whose diff was read. */
export const MergeQuerySchema = z
  .object({
    head: z
      .string()
      .regex(/^[0-9a-f]{40}$/, "give the 40-hex commit the diff was read at (change.head)")
      .optional(),
  })
  .strict();

/** `POST /api/jobs/:id/merge`: what the merge did, and the job with its worktree now merged. */
export const MergeResultSchema = z.object({
  into: z.string(),
  commit: z.string(),
  fastForward: z.boolean(),
});
export type MergeResult = z.infer<typeof MergeResultSchema>;

/** `POST /api/jobs/:id/discard`, `corral_discard`: what went with the branch, said so that nothing is lost unknowingly. */
export const DiscardResultSchema = z.object({
  branch: z.string(),
  /** The branch's commits not in its base, `<short sha> <subject>`, newest first: gone with it. */
  commits: z.array(z.string()),
  /** The commit the branch pointed at (git keeps it unreachable for a while: `git branch <name> <head>` brings it back). */
  head: z.string().nullable(),
});
export type DiscardResult = z.infer<typeof DiscardResultSchema>;
export type JobDiff = z.infer<typeof JobDiffSchema>;
