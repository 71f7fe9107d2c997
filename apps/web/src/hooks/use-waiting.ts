import type { Job } from "@corral/shared";
import { waitingReason } from "../lib/domain/job-waiting.js";
import { useAgents } from "./use-agents.js";
import { useActiveJobs, useJobAttempts } from "./use-jobs.js";

/** Why queued job `job` has not started (null once it has), from the agents, the active jobs and its attempts as read. */
export function useWaitingReason(job: Job, now: number): string | null {
  const agents = useAgents();
  const active = useActiveJobs();
  const attempts = useJobAttempts(job.status === "queued" ? job : undefined);
  if (job.status !== "queued") return null;
  const previous = attempts.data?.attempts.filter((a) => a.attempt < job.attempt).at(-1);
  return waitingReason(job, {
    agent: agents.data?.find((a) => a.name === job.agent),
    active: active.data?.jobs ?? [],
    lastAttemptEnd: previous?.endedAt,
    now,
  });
}
