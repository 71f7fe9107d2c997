import {
  type DiscardResult,
  DiscardResultSchema,
  type JobDiff,
  JobDiffSchema,
  type JobWorktree,
  type MergeResult,
  MergeResultSchema,
  type WorktreeChange,
  WorktreeChangeSchema,
} from "@corral/shared";
import { z } from "zod";
import { ServiceError } from "../lib/errors.js";
import { archiveWorktree, changeOf, changesOf, diffOf, discardWorktree, mergeWorktree, removeWorktree } from "../worktrees/git-worktree.js";

/** What a merge did, and why its worktree is still there if it is (null: removed). */
export type MergeDone = MergeResult & { notRemoved: string | null };

/**
 * The git work on one job's worktree, wherever the worktree is: on this machine (git-worktree.ts),
 * or on a runner's, which does the same work there when asked (runner/worktree-answers.ts).
 */
export interface WorktreeGit {
  change(jobId: string, wt: JobWorktree): Promise<WorktreeChange>;
  diff(jobId: string, wt: JobWorktree, path?: string): Promise<JobDiff>;
  changes(jobId: string, wt: JobWorktree, path?: string): Promise<JobDiff & { change: WorktreeChange }>;
  /** Merges the branch into its base, then removes worktree and branch (what stops the removal is said, not thrown: the merge happened). */
  merge(jobId: string, agent: string, wt: JobWorktree, expectedHead?: string): Promise<MergeDone>;
  discard(jobId: string, wt: JobWorktree): Promise<DiscardResult>;
  archive(jobId: string, agent: string, wt: JobWorktree): Promise<void>;
}

/** The work on this machine's worktrees. */
export const localWorktreeGit: WorktreeGit = {
  change: (_jobId, wt) => changeOf(wt),
  diff: (_jobId, wt, path) => diffOf(wt, path),
  changes: (_jobId, wt, path) => changesOf(wt, path),
  async merge(jobId, agent, wt, expectedHead) {
    const merged = await mergeWorktree(wt, jobId, agent, expectedHead);
    const notRemoved = await removeWorktree(wt).then(
      () => null,
      (err: unknown) => (err instanceof Error ? err.message : String(err)),
    );
    return { ...merged, notRemoved };
  },
  discard: (_jobId, wt) => discardWorktree(wt),
  archive: (jobId, agent, wt) => archiveWorktree(wt, jobId, agent),
};

/** An action on a job's worktree that a runner is asked to do (runner_requests.args). */
export const WorktreeAskSchema = z.discriminatedUnion("op", [
  z.object({ op: z.literal("change"), jobId: z.string() }),
  z.object({ op: z.literal("diff"), jobId: z.string(), path: z.string().optional() }),
  z.object({ op: z.literal("changes"), jobId: z.string(), path: z.string().optional() }),
  z.object({ op: z.literal("merge"), jobId: z.string(), head: z.string().optional() }),
  z.object({ op: z.literal("discard"), jobId: z.string() }),
  z.object({ op: z.literal("archive"), jobId: z.string() }),
]);
export type WorktreeAsk = z.infer<typeof WorktreeAskSchema>;

/** A commit's full name (SHA-1 or SHA-256). */
const COMMIT = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** What the server accepts as a runner's answer to each action: checked before it is believed. */
export const WORKTREE_ANSWERS = {
  change: WorktreeChangeSchema,
  diff: JobDiffSchema,
  changes: JobDiffSchema.extend({ change: WorktreeChangeSchema }),
  merge: MergeResultSchema.extend({ commit: z.string().regex(COMMIT), notRemoved: z.string().max(8000).nullable() }),
  discard: DiscardResultSchema.extend({ head: z.string().regex(COMMIT).nullable() }),
  archive: z.object({}),
} as const satisfies { [K in WorktreeAsk["op"]]: z.ZodType };

/** Asks the runner that made a worktree (its id) to do an action there, and reads its answer. */
export type AskRunner = (runnerId: string, ask: WorktreeAsk) => Promise<unknown>;

/** The work on worktrees a runner made: each action asked of that runner, each answer checked. */
export function runnerWorktreeGit(askRunner: AskRunner): WorktreeGit {
  const ask = async <K extends WorktreeAsk["op"]>(
    wt: JobWorktree,
    request: WorktreeAsk & { op: K },
  ): Promise<z.output<(typeof WORKTREE_ANSWERS)[K]>> => {
    if (wt.runner === undefined) throw new Error(`job ${request.jobId}'s worktree is not a runner's`);
    const schema: z.ZodType = WORKTREE_ANSWERS[request.op];
    const checked = schema.safeParse(await askRunner(wt.runner, request));
    if (!checked.success) {
      const issue = checked.error.issues[0];
      throw new ServiceError(
        `runner ${wt.runner} sent an answer to ${request.op} the server does not accept (${issue?.path.join(".") || "the answer"}: ${issue?.message ?? "invalid"}); see its log`,
        503,
        "job_id",
      );
    }
    return checked.data as z.output<(typeof WORKTREE_ANSWERS)[K]>;
  };
  return {
    change: (jobId, wt) => ask(wt, { op: "change", jobId }),
    diff: (jobId, wt, path) => ask(wt, { op: "diff", jobId, ...(path === undefined ? {} : { path }) }),
    changes: (jobId, wt, path) => ask(wt, { op: "changes", jobId, ...(path === undefined ? {} : { path }) }),
    async merge(jobId, _agent, wt, head) {
      const merged = await ask(wt, { op: "merge", jobId, ...(head === undefined ? {} : { head }) });
      // A merge goes into the job's base: an answer naming another branch is not believed.
      if (merged.into !== wt.base)
        throw new ServiceError(`runner ${wt.runner} says it merged into ${merged.into}, not ${wt.base}; see its log`, 503, "job_id");
      return merged;
    },
    discard: (jobId, wt) => ask(wt, { op: "discard", jobId }),
    archive: async (jobId, _agent, wt) => {
      await ask(wt, { op: "archive", jobId });
    },
  };
}
