import { isFinalStatus, LOCAL_RUNNER, type CancelSource, type Job, type JobAttempt } from "@corral/shared";
import { formatDuration, formatTokens, statusLabels, usageCost } from "../format/format.js";
import { failureLine } from "./job-failure.js";

export interface TimelineStep {
  key: string;
  label: string;
  at: number;
  note?: string;
  /** How the step reads: an end that is not a success is marked, a cancel is not an error. */
  tone?: "ok" | "bad" | "warn";
}

const doors: Record<CancelSource, string> = {
  panel: "from the panel",
  mcp: "over MCP",
  rest: "through the REST API",
  server: "by the server as it stopped",
};

/** "over MCP (claude-code/2.1.3)": the door, and the client that said who it was. */
export function cancelledBy(cancel: NonNullable<Job["cancel"]>): string {
  const client = cancel.client && cancel.client !== cancel.by ? ` (${cancel.client})` : "";
  return `${doors[cancel.by]}${client}`;
}

const launchedFrom: Record<Job["origin"], string> = { panel: "from the panel", mcp: "over MCP", rest: "through the REST API" };

const toneOf = (status: Job["status"]): TimelineStep["tone"] => (status === "succeeded" ? "ok" : status === "cancelled" ? "warn" : "bad");

/**
 * "exit code 1": said of a worker process only. An in-process agent's job (an Ollama or API model's
 * tool loop: no invocation) has no process to exit, whatever code the registry keeps for it.
 */
function exitNote(job: Job, exitCode: number | null): string | undefined {
  return exitCode !== null && job.invocation !== null ? `exit code ${exitCode}` : undefined;
}

/** "1.2k in / 40 out · $0.0036": an attempt's own usage, when it reported any. */
function attemptUsage(a: JobAttempt): string | undefined {
  const u = a.usage;
  if (u.inputTokens === null && u.outputTokens === null && u.costUsd === null) return undefined;
  return `${formatTokens(u.inputTokens)} in / ${formatTokens(u.outputTokens)} out · ${usageCost(u)}`;
}

/**
 * One step per attempt of a retried job, at its own start: how it ended (or that it runs), how
 * long it ran, its exit code, its own error and usage. The current attempt carries the pid.
 */
function attemptSteps(job: Job, attempts: JobAttempt[], where: string | undefined): TimelineStep[] {
  return attempts.map((a) => {
    const current = a.attempt === job.attempt;
    const how = current && job.pid !== null ? `pid ${job.pid}` : undefined;
    const ran = a.endedAt !== null ? `ran ${formatDuration(a.endedAt - a.startedAt)}` : undefined;
    const exit = exitNote(job, a.exitCode);
    const ended = isFinalStatus(a.status);
    return {
      key: `attempt-${a.attempt}`,
      label: `attempt ${a.attempt} ${ended ? statusLabels[a.status] : "started"}`,
      at: a.startedAt,
      note: [how, where, ran, exit, failureLine(a.error, a.exitCode), attemptUsage(a)].filter(Boolean).join(" · ") || undefined,
      ...(ended ? { tone: toneOf(a.status) } : {}),
    };
  });
}

/**
 * What became of a worktree job's branch, when it did (`changedAt`; a record from before it was
 * kept has no date, so no step). A follow-up shares its conversation's worktree, and so its step.
 */
function worktreeStep(wt: NonNullable<Job["worktree"]>): TimelineStep | null {
  if (wt.state === "pending" || wt.state === "active" || wt.changedAt === undefined) return null;
  const at = wt.changedAt;
  switch (wt.state) {
    case "merged":
      return { key: "worktree", label: `merged into ${wt.base}`, at, note: `branch ${wt.branch} and its worktree removed`, tone: "ok" };
    case "discarded":
      return {
        key: "worktree",
        label: "discarded",
        at,
        note: `branch ${wt.branch} and its worktree removed without merging${wt.head ? `; it pointed at ${wt.head.slice(0, 12)}` : ""}`,
        tone: "warn",
      };
    case "archived":
      return { key: "worktree", label: "worktree archived, branch kept", at, note: `left unreviewed: ${wt.branch} can still be merged or discarded` };
  }
}

/**
 * What happened to a job, in order, as its page lists it: like a CI run's log of steps. `runnerName`: its runner's, when known.
 * `attempts` (GET /api/jobs/:id/attempts): a retried job has a step for each.
 */
export function timelineSteps(job: Job, runnerName: string | null = job.runner, attempts: JobAttempt[] = []): TimelineStep[] {
  const steps: TimelineStep[] = [{ key: "queued", label: "queued", at: job.createdAt, note: `launched ${launchedFrom[job.origin]}` }];
  // A runner's pid is of its own machine: said with it. The server's own jobs (runner `local`, every
  // job of a single-machine install) say nothing of runners.
  const where = job.runner !== null && job.runner !== LOCAL_RUNNER ? `on runner ${runnerName ?? job.runner}` : undefined;
  if (attempts.length > 1) for (const step of attemptSteps(job, attempts, where)) steps.push(step);
  else if (job.startedAt !== null) {
    const how = job.pid !== null ? `pid ${job.pid}` : job.invocation === null ? "in-process" : undefined;
    const attempt = job.attempt > 1 ? `attempt ${job.attempt}` : undefined;
    steps.push({ key: "started", label: "started", at: job.startedAt, note: [how, where, attempt].filter(Boolean).join(" · ") || undefined });
  }
  if (job.cancel) steps.push({ key: "cancel", label: "cancel requested", at: job.cancel.at, note: cancelledBy(job.cancel), tone: "warn" });
  if (job.killedAt !== null) {
    steps.push({
      key: "killed",
      label: "killed (SIGKILL)",
      at: job.killedAt,
      note: "still running after the grace period that followed SIGTERM",
      tone: "bad",
    });
  }
  if (isFinalStatus(job.status) && job.endedAt !== null) {
    const note = exitNote(job, job.exitCode) ?? (job.startedAt === null ? "its worker never started" : undefined);
    const took =
      job.startedAt !== null && attempts.length > 1
        ? `took ${formatDuration(job.endedAt - job.startedAt)} over ${attempts.length} attempts`
        : undefined;
    steps.push({
      key: "ended",
      label: statusLabels[job.status],
      at: job.endedAt,
      note: [note, took].filter(Boolean).join(" · ") || undefined,
      tone: toneOf(job.status),
    });
  }
  const branch = job.worktree ? worktreeStep(job.worktree) : null;
  if (branch) steps.push(branch);
  return steps;
}
