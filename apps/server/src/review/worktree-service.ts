import {
  type DiscardResult,
  isFinalStatus,
  type Job,
  type JobChanges,
  type JobDiff,
  type JobWorktree,
  type MergeResult,
  type WorktreeChange,
} from "@corral/shared";
import type { Actor } from "../audit/service.js";
import type { JobsRepo } from "../db/registry.js";
import type { JobRow } from "../db/schema.js";
import type { JobStore } from "../jobs/job-store.js";
import { badInput, notFound, ServiceError } from "../lib/errors.js";
import { GitError } from "../lib/git.js";
import { localWorktreeGit, type WorktreeGit } from "./worktree-git.js";
import { holdWorktree } from "../worktrees/worktree-locks.js";

/**
 * Worktree jobs' changes and the actions on them, the same for every door (REST, MCP, the panel):
 * the change told, the diff, merge into the base, discard. One action at a time per repository.
 */
export class WorktreeService {
  /** Each repository's last action (by its git dir), which the next waits for. */
  private readonly queues = new Map<string, Promise<void>>();

  constructor(
    private readonly jobs: Pick<JobsRepo, "get" | "thread" | "withWorktree">,
    private readonly store: Pick<JobStore, "update" | "atomically" | "audit">,
    /** The work on worktrees runners made, on their machines (none with SQLite: no runners). */
    private readonly onRunners?: WorktreeGit,
  ) {}

  /** Where the worktree's git work is done: a runner's worktree on its machine, never here. */
  private gitFor(wt: JobWorktree): WorktreeGit {
    if (wt.runner === undefined) return localWorktreeGit;
    if (!this.onRunners) throw new ServiceError(`this worktree was made by runner ${wt.runner}, and this server has no runners`, 409, "job_id");
    return this.onRunners;
  }

  /**
   * Archives the worktrees nobody reviewed: a job whose conversation's last turn ended more than
   * `keepMs` ago, neither merged nor discarded, loses its worktree folder and keeps its branch
   * (what was left uncommitted is committed first), so no change is ever lost to the policy. The
   * jobs archived; a worktree that cannot be archived now is told and tried again next time.
   */
  async archiveAbandoned(keepMs: number, now: number, warn: (message: string) => void): Promise<string[]> {
    const archived: string[] = [];
    const seen = new Set<string>();
    for (const row of await this.jobs.withWorktree("active")) {
      const wt = row.worktree;
      if (!wt || seen.has(wt.path)) continue;
      seen.add(wt.path);
      const turns = await this.sharing(row);
      const lastEnd = Math.max(...turns.map((t) => (isFinalStatus(t.status) ? (t.endedAt ?? t.createdAt) : Number.POSITIVE_INFINITY)));
      if (now - lastEnd < keepMs) continue;
      try {
        await this.once(row.id, "being archived", async (held, heldWt) => {
          await this.gitFor(heldWt).archive(held.id, held.agent, heldWt);
          await this.mark(held, "archived", null);
        });
        archived.push(row.id);
      } catch (err) {
        warn(`job ${row.id}: could not archive its worktree ${wt.path}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    return archived;
  }

  /** A worktree job's change, uncommitted work included; null for a job without a worktree, or one merged or discarded. */
  async change(job: Pick<Job, "id" | "worktree">): Promise<WorktreeChange | null> {
    const wt = job.worktree;
    if (wt?.state !== "active" && wt?.state !== "archived") return null;
    try {
      return await this.gitFor(wt).change(job.id, wt);
    } catch {
      return null;
    }
  }

  async diff(jobId: string, path?: string): Promise<JobDiff> {
    const wt = await this.readable(jobId);
    return gitAnswers(jobId, this.gitFor(wt).diff(jobId, wt, path));
  }

  /** The worktree, its change and its diff, for the panel's Changes view and REST. */
  async changes(jobId: string, path?: string): Promise<JobChanges> {
    const wt = await this.readable(jobId);
    return { worktree: wt, ...(await gitAnswers(jobId, this.gitFor(wt).changes(jobId, wt, path))) };
  }

  /** The job's worktree, to read its change: a pending one has none yet (its runner has not made it). */
  private async readable(jobId: string): Promise<JobWorktree> {
    const wt = (await this.worktreeJob(jobId)).worktree;
    if (!wt) throw notWorktree(jobId);
    if (wt.state === "pending") {
      throw new ServiceError(
        `job ${jobId}'s worktree is made when a runner takes the job; it has no change yet`,
        409,
        "job_id",
        undefined,
        "conflict",
        {
          jobId,
        },
      );
    }
    return wt;
  }

  /**
   * Merges the ended job's branch into its base; its worktree and branch go. `actor`: who asked,
   * for the audit trail; `expectedHead`: the commit whose diff was reviewed (refused if it moved).
   */
  async merge(jobId: string, actor: Actor, expectedHead?: string): Promise<MergeResult & { job: JobRow }> {
    return this.once(jobId, "being merged", async (row, wt) => {
      const { notRemoved, ...merged } = await gitAnswers(jobId, this.gitFor(wt).merge(row.id, row.agent, wt, expectedHead));
      // Recorded whatever the removal met: the base has moved.
      const job = await this.mark(row, "merged", merged.commit, actor);
      if (notRemoved !== null) {
        throw new ServiceError(
          `merged ${wt.branch} into ${merged.into} (${merged.commit.slice(0, 12)}), but its worktree could not be removed: ${notRemoved}; remove ${wt.path} and branch ${wt.branch} yourself${
            wt.runner ? ` (on the machine of runner ${wt.runner})` : ""
          }`,
          409,
          "job_id",
          undefined,
          "conflict",
          { jobId },
        );
      }
      return { ...merged, job };
    });
  }

  /** Removes the ended job's worktree and branch, its unmerged commits with them: the answer names them. */
  async discard(jobId: string, actor: Actor): Promise<DiscardResult & { job: JobRow }> {
    return this.once(jobId, "being discarded", async (row, wt) => {
      const dropped = await gitAnswers(jobId, this.gitFor(wt).discard(row.id, wt));
      return { ...dropped, job: await this.mark(row, "discarded", dropped.head, actor) };
    });
  }

  private async once<T>(jobId: string, doing: string, act: (row: JobRow, wt: NonNullable<JobRow["worktree"]>) => Promise<T>): Promise<T> {
    const asked = await this.worktreeJob(jobId);
    if (!asked.worktree) throw notWorktree(jobId);
    // Read again once the repository's turn comes: an action queued before may have ended it.
    return this.inRepository(asked.worktree.gitDir, async () => {
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
      if (wt.state === "merged" || wt.state === "discarded")
        throw new ServiceError(`job ${jobId}'s worktree was already ${wt.state}`, 409, "job_id", undefined, "conflict", { jobId });
      if (wt.state === "pending")
        throw new ServiceError(`job ${jobId}'s worktree was never made (no runner took the job)`, 409, "job_id", undefined, "conflict", { jobId });
      // Held from here: a follow-up launched into the worktree meanwhile is refused, and so is this
      // action while such a launch is being stored (its job, not yet visible, will run there).
      const release = holdWorktree(wt.path, `${doing} (job ${jobId})`, "job_id");
      try {
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
        return await act(row, wt);
      } finally {
        release();
      }
    });
  }

  /**
   * Runs actions on one repository one after the other: two merges into its checked-out branch at
   * once would meet at its index lock, and the second's view of the base would be stale.
   */
  private inRepository<T>(gitDir: string, action: () => Promise<T>): Promise<T> {
    const run = (this.queues.get(gitDir) ?? Promise.resolve()).then(action);
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.queues.set(gitDir, settled);
    void settled.then(() => {
      if (this.queues.get(gitDir) === settled) this.queues.delete(gitDir);
    });
    return run;
  }

  /** The jobs of the conversation that worked on the row's branch (each keeps its own copy of the worktree record). */
  private async sharing(row: JobRow): Promise<JobRow[]> {
    const thread = await this.jobs.thread(row.conversationId ?? row.id, 10_000);
    return [row, ...thread.filter((other) => other.id !== row.id && other.worktree?.branch === row.worktree?.branch)];
  }

  /**
   * Records the worktree's new state on every job that worked in it (when, and where its branch
   * pointed), with the audit entry of who asked, in one transaction; the row asked about, as stored.
   */
  private async mark(row: JobRow, state: "merged" | "discarded" | "archived", head: string | null, actor?: Actor): Promise<JobRow> {
    const sharing = await this.sharing(row);
    const changedAt = Date.now();
    return this.store.atomically(async (unit) => {
      let marked = row;
      for (const job of sharing) {
        if (!job.worktree) continue;
        const updated = await this.store.update(job.id, { worktree: { ...job.worktree, state, changedAt, head } }, unit);
        if (job.id === row.id) marked = updated;
      }
      if (actor && state !== "archived") await this.store.audit(unit, state === "merged" ? "merge" : "discard", marked, actor);
      return marked;
    });
  }

  private async worktreeJob(jobId: string): Promise<JobRow> {
    const row = await this.jobs.get(jobId);
    if (!row) throw notFound(`job ${jobId} not found`, "job_id");
    return row;
  }
}

/**
 * Git refusing or failing on the job's repository (a state it cannot work with, files a worker
 * left, its time limit): an answer that names the job and says git's reason, not an internal error.
 */
async function gitAnswers<T>(jobId: string, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (!(err instanceof GitError)) throw err;
    throw new ServiceError(`git failed on job ${jobId}'s worktree: ${err.message}`, 409, "job_id", undefined, "conflict", { jobId });
  }
}

const notWorktree = (jobId: string) =>
  badInput(`job ${jobId} did not run in a worktree (launch with worktree: true for a branch of its own)`, "job_id");
