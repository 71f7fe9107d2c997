import type { Job, LaunchJobBody } from "@corral/shared";

/**
 * The same inputs a job ran with (its limits too), as a launch body; a follow-up continues the same earlier turn
 * again. A worktree job runs again in a new worktree of its repository, from the same base (its
 * own folder is its worktree, gone once merged or discarded); a worktree follow-up continues in
 * its conversation's, so it names no workdir. The new job records that it relaunched this one.
 */
export function relaunchBody(job: Job): LaunchJobBody {
  const wt = job.worktree;
  const where = wt ? (job.followUpOf ? {} : { workdir: wt.repo, worktree: true, base: wt.base }) : { workdir: job.workdir };
  return {
    agent: job.agent,
    prompt: job.prompt,
    ...where,
    ...(job.model ? { model: job.model } : {}),
    timeoutS: job.timeoutS,
    ...(job.limits.maxCostUsd !== null ? { maxCostUsd: job.limits.maxCostUsd } : {}),
    ...(job.limits.maxTokens !== null ? { maxTokens: job.limits.maxTokens } : {}),
    ...(job.followUpOf ? { session: job.followUpOf } : {}),
    relaunchOf: job.id,
  };
}

/** A reply in a job's thread: a follow-up of the thread's last job, in its workdir with its model (the server's defaults). */
export function replyBody(last: Job, prompt: string): LaunchJobBody {
  return { agent: last.agent, prompt, session: last.id };
}
