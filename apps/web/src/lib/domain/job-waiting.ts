import { retryBackoffMs, type Agent, type Job } from "@corral/shared";
import { formatDuration } from "../format/format.js";

/** What the panel knows around a queued job: its agent, the jobs running or queued now, its last attempt's end. */
export interface WaitingContext {
  agent: Pick<Agent, "name" | "maxConcurrent" | "runnerLabel"> | undefined;
  /** The running and queued jobs (GET /api/jobs?status=running,queued). */
  active: readonly Job[];
  /** When its previous attempt ended (a retried job's attempts); undefined when not read (yet). */
  lastAttemptEnd?: number | null;
  now: number;
}

/**
 * Why a queued job has not started, in words a person knows: a retry's countdown ("retry 2 of 3 in
 * 8s"), the runner it waits for, or the agent's limit and the job it is behind. Null for a job that
 * is not queued. The server decides; this says what it decides on (a retry's backoff, the
 * agent's runner label and `maxConcurrent`) from what the panel has read.
 */
export function waitingReason(job: Job, { agent, active, lastAttemptEnd, now }: WaitingContext): string | null {
  if (job.status !== "queued") return null;
  if (job.attempt > 1 && job.retry) {
    const of = `retry ${job.attempt} of ${job.retry.maxAttempts}`;
    const at = lastAttemptEnd != null ? lastAttemptEnd + retryBackoffMs(job.retry, job.attempt) : null;
    if (at === null) return `${of}, after a pause`;
    if (at > now) return `${of} in ${formatDuration(at - now)}`;
  }
  if (job.runner === null && agent?.runnerLabel) return `waiting for a runner with label ${agent.runnerLabel}`;
  if (!agent) return "waiting for a free slot";
  const running = active.filter((j) => j.agent === job.agent && j.status === "running").sort((a, b) => a.createdAt - b.createdAt);
  if (running.length < agent.maxConcurrent) return "starting";
  const ahead = active.filter((j) => j.agent === job.agent && j.status === "queued" && j.createdAt < job.createdAt).length;
  const behind = running.length === 1 ? `job ${running[0]?.id}` : `${running.length} running jobs`;
  const queued = ahead ? ` and ${ahead} queued before it` : "";
  return `${agent.name} runs ${agent.maxConcurrent} at once: behind ${behind}${queued}`;
}
