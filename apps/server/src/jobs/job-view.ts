import type { Job, JobAttempt, Usage } from "@corral/shared";
import type { JobAttemptRow, JobRow } from "../db/schema.js";
import type { UsageFields } from "../costs/attempt-usage.js";

const usageView = (row: UsageFields): Usage => ({
  model: row.usageModel,
  inputTokens: row.inputTokens,
  outputTokens: row.outputTokens,
  cachedInputTokens: row.cachedInputTokens,
  costUsd: row.costUsd,
  costSource: row.costSource,
});

/** The public shape of one attempt of a job, the same on every door. */
export function toJobAttempt(row: JobAttemptRow): JobAttempt {
  const { attempt, status, exitCode, error, startedAt, endedAt, outputStart, outputEnd } = row;
  return { attempt, status, exitCode, error, startedAt, endedAt, outputStart, outputEnd, usage: usageView(row) };
}

/** The public shape of a stored job, the same on every door. */
export function toJob(row: JobRow): Job {
  return {
    id: row.id,
    agent: row.agent,
    status: row.status,
    prompt: row.prompt,
    workdir: row.workdir,
    model: row.model,
    timeoutS: row.timeoutS,
    origin: row.origin,
    invocation: row.invocation ?? null,
    pid: row.pid,
    exitCode: row.exitCode,
    error: row.error,
    finalText: row.finalText,
    attempt: row.attempt,
    retry: row.retry ?? null,
    outputBytes: row.outputBytes,
    usage: usageView(row),
    provider: row.provider,
    limits: { maxCostUsd: row.maxCostUsd, maxTokens: row.maxTokens },
    createdAt: row.createdAt,
    startedAt: row.startedAt,
    endedAt: row.endedAt,
    cancel:
      row.cancelRequestedAt !== null && row.cancelledBy !== null
        ? { at: row.cancelRequestedAt, by: row.cancelledBy, client: row.cancelClient }
        : null,
    killedAt: row.killedAt,
    conversationId: row.conversationId ?? row.id,
    groupId: row.groupId,
    relaunchOf: row.relaunchOf,
    followUpOf: row.followUpOf,
    workerSession: row.workerSession,
    worktree: row.worktree ?? null,
    runner: row.runner,
  };
}
