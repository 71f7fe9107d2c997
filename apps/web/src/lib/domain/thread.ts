import { isFinalStatus, type AgentWithAvailability, type Job } from "@corral/shared";

/**
 * Why a thread takes no reply now, in the panel's words; null when it does. A reply continues the
 * thread's last job, so that job must have ended with a conversation its worker can pick up again.
 */
export function replyBlocked(last: Job, agent: AgentWithAvailability | undefined): string | null {
  if (agent && !agent.resumes) {
    return `${agent.name} cannot take follow-ups: Corral has no way to resume its worker's session. Launch a new job instead.`;
  }
  if (!isFinalStatus(last.status)) return `Reply once job ${last.id} has ended: a reply continues its finished turn.`;
  if (last.startedAt === null) return `Job ${last.id} never started, so there is nothing to follow up. Relaunch it, or reply from an earlier turn.`;
  // A CLI worker reports its session id; without one (or an in-process agent's kept messages) the server refuses.
  if (last.invocation !== null && last.workerSession === null) {
    return `Job ${last.id}'s worker reported no session, so it cannot be followed up. Launch a new job instead.`;
  }
  return null;
}
