import { isFinalStatus, type Job, type JobChanges, type JobDiff, type MergeResult, type WorktreeChange } from "@corral/shared";
import type { JobRow } from "../db/schema.js";
import type { JobStore } from "../jobs/job-store.js";
import { badInput, notFound, ServiceError } from "../lib/errors.js";
import { changeOf, diffOf, mergeWorktree, removeWorktree } from "../worktrees/git-worktree.js";

/**
 * Worktree jobs' changes and the actions on them, the same for every door (REST, MCP, the panel):
 * the change told, the diff, merge into the base, discard. One action at a time per repository.
 */
export class WorktreeService {
  /** Each repository's last action, which the next waits for. */
  private readonly queues = new Map<string, Promise<void>>();

  constructor(
    private readonly jobs: { get(id: string): Promise<JobRow | undefined>; thread(conversationId: string, limit: number): Promise<JobRow[]> },
    private readonly store: Pick<JobStore, "update">,
  ) {}

  /** A worktree job's change, uncommitted work included; null for a job without a worktree, or one merged or discarded. */
  async change(job: Pick<Job, "worktree">): Promise<WorktreeChange | null> {
    if (job.worktree?.state !== "active") return null;
    return changeOf(job.worktree).catch(() => null);
  }

  async diff(jobId: string, path?: string): Promise<JobDiff> {
    const row = await this.worktreeJob(jobId);
    if (!row.worktree) throw notWorktree(jobId);
    return diffOf(row.worktree, path);
  }

  /** The worktree, its change and its diff, for the panel's Changes view and REST. */
  async changes(jobId: string, path?: string): Promise<JobChanges> {
    const row = await this.worktreeJob(jobId);
    if (!row.worktree) throw notWorktree(jobId);
    const diff = await diffOf(row.worktree, path);
    return { worktree: row.worktree, change: await changeOf(row.worktree), ...diff };
  }

  /** Merges the ended job's branch into its base; its worktree and branch go. */
  async merge(jobId: string): Promise<MergeResult & { job: JobRow }> {
    return this.once(jobId, async (row, wt) => {
      const merged = await mergeWorktree(wt, row.id, row.agent);
      await removeWorktree(wt);
      return { ...merged, job: await this.mark(row, "merged") };
    });
  }

  /** Removes the ended job's worktree and branch, its unmerged commits with them. */
  async discard(jobId: string): Promise<JobRow> {
    return this.once(jobId, async (row, wt) => {
      await removeWorktree(wt);
      return this.mark(row, "discarded");
    });
  }

  private async once<T>(jobId: string, act: (row: JobRow, wt: NonNullable<JobRow["worktree"]>) => Promise<T>): Promise<T> {
    const asked = await this.worktreeJob(jobId);
    if (!asked.worktree) throw notWorktree(jobId);
    // Read again once the repository's turn comes: an action queued before may have ended it.
    return this.inRepository(asked.worktree.repo, async () => {
      const row = await this.worktreeJob(jobId);
      const wt = row.worktree;
      if (!wt) throw notWorktree(jobId);
      if (!isFinalStatus(row.status)) {
        throw new ServiceError(
          `job ${jobId} is still ${row.status}; wait for it to end (corral_wait), or cancel it, then merge or discard it`,
          409,
          "job_id",
          undefined,
          "conflict",
          { jobId },
        );
      }
      if (wt.state !== "active")
        throw new ServiceError(`job ${jobId}'s worktree was already ${wt.state}`, 409, "job_id", undefined, "conflict", { jobId });
      // A follow-up works in the same worktree: none of the conversation may be running there.
      const working = (await this.sharing(row)).find((other) => !isFinalStatus(other.status));
      if (working) {
        throw new ServiceError(
          `job ${working.id} is still ${working.status} in this worktree; wait for it to end, then merge or discard`,
          409,
          "job_id",
          undefined,
          "conflict",
          { jobId: working.id },
        );
      }
      return act(row, wt);
    });
  }

  /**
   * Runs actions on one repository one after the other: two merges into its checked-out branch at
   * once would meet at its index lock, and the second's view of the base would be stale.
   */
  private inRepository<T>(repo: string, action: () => Promise<T>): Promise<T> {
    const run = (this.queues.get(repo) ?? Promise.resolve()).then(action);
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.queues.set(repo, settled);
    void settled.then(() => {
      if (this.queues.get(repo) === settled) this.queues.delete(repo);
    });
    return run;
  }

  /** The jobs of the conversation that worked on the row's branch (each keeps its own copy of the worktree record). */
  private async sharing(row: JobRow): Promise<JobRow[]> {
    const thread = await this.jobs.thread(row.conversationId ?? row.id, 10_000);
    return [row, ...thread.filter((other) => other.id !== row.id && other.worktree?.branch === row.worktree?.branch)];
  }

  /** Records the worktree's end on every job that worked in it; the row asked about, as stored. */
  private async mark(row: JobRow, state: "merged" | "discarded"): Promise<JobRow> {
    let marked = row;
    for (const job of await this.sharing(row)) {
      if (!job.worktree) continue;
      const updated = await this.store.update(job.id, { worktree: { ...job.worktree, state } });
      if (job.id === row.id) marked = updated;
    }
    return marked;
  }

  private async worktreeJob(jobId: string): Promise<JobRow> {
    const row = await this.jobs.get(jobId);
    if (!row) throw notFound(`job ${jobId} not found`, "job_id");
    return row;
  }
}

const notWorktree = (jobId: string) =>
  badInput(`job ${jobId} did not run in a worktree (launch with worktree: true for a branch of its own)`, "job_id");
