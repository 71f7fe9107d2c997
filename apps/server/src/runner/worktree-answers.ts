// This runner's side of an action on a job's worktree (runner_requests of kind worktree): the
// server decides whether the action may happen (the job ended, nothing else working there) and
// records what it did; the git work is done here, on the machine the worktree is on, by the same
// code the server runs on its own (review/worktree-git.ts).
import type { Registry } from "../db/registry.js";
import { badInput, notFound, ServiceError } from "../lib/errors.js";
import { GitError } from "../lib/git.js";
import { localWorktreeGit, type WorktreeAsk, WorktreeAskSchema } from "../review/worktree-git.js";

export class WorktreeAnswers {
  constructor(
    private readonly registry: Pick<Registry, "jobs" | "runners">,
    /** This runner's name: the worktrees made under it, at any start, are on this machine. */
    private readonly name: string,
  ) {}

  /** What the action `args` (the request's JSON) answers, or its refusal thrown as the server's own would be. */
  async answer(args: string | null): Promise<unknown> {
    let asked: WorktreeAsk;
    try {
      asked = WorktreeAskSchema.parse(JSON.parse(args ?? "null"));
    } catch {
      throw badInput(
        "the server asked for an action on a worktree this runner does not know; are the server and the runner the same version?",
        "job_id",
      );
    }
    const job = await this.registry.jobs.get(asked.jobId);
    if (!job) throw notFound(`job ${asked.jobId} not found`, "job_id");
    const wt = job.worktree;
    if (!wt?.runner || !(await this.madeHere(wt.runner))) {
      throw new ServiceError(`job ${asked.jobId}'s worktree was not made by runner ${this.name}`, 409, "job_id", undefined, "conflict");
    }
    const reads = wt.state === "active" || wt.state === "archived";
    if (!reads || (asked.op === "archive" && wt.state !== "active")) {
      throw new ServiceError(`job ${asked.jobId}'s worktree is ${wt.state}`, 409, "job_id", undefined, "conflict");
    }
    const git = localWorktreeGit;
    try {
      switch (asked.op) {
        case "change":
          return await git.change(job.id, wt);
        case "diff":
          return await git.diff(job.id, wt, asked.path);
        case "changes":
          return await git.changes(job.id, wt, asked.path);
        case "merge":
          return await git.merge(job.id, job.agent, wt, asked.head);
        case "discard":
          return await git.discard(job.id, wt);
        case "archive":
          await git.archive(job.id, job.agent, wt);
          return {};
      }
    } catch (err) {
      // As the server says it of its own worktrees (review/worktree-service.ts): git's reason, never an internal error.
      if (err instanceof GitError)
        throw new ServiceError(`git failed on job ${job.id}'s worktree: ${err.message}`, 409, "job_id", undefined, "conflict");
      throw err;
    }
  }

  private async madeHere(maker: string): Promise<boolean> {
    return (await this.registry.runners.list()).some((r) => r.id === maker && r.name === this.name);
  }
}
