import { isFinalStatus, type CancelSource, type Job } from "@corral/shared";
import { statusLabels } from "../format/format.js";

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

/** What happened to a job, in order, as its page lists it: like a CI run's log of steps. `runnerName`: its runner's, when known. */
export function timelineSteps(job: Job, runnerName: string | null = job.runner): TimelineStep[] {
  const steps: TimelineStep[] = [{ key: "queued", label: "queued", at: job.createdAt, note: `launched ${launchedFrom[job.origin]}` }];
  if (job.startedAt !== null) {
    const how = job.pid !== null ? `pid ${job.pid}` : job.invocation === null ? "in-process" : undefined;
    const attempt = job.attempt > 1 ? `attempt ${job.attempt}` : undefined;
    // A runner's pid is of its own machine: said with it.
    const where = job.runner !== null ? `on runner ${runnerName ?? job.runner}` : undefined;
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
    const note = job.exitCode !== null ? `exit code ${job.exitCode}` : job.startedAt === null ? "its worker never started" : undefined;
    const tone = job.status === "succeeded" ? "ok" : job.status === "cancelled" ? "warn" : "bad";
    steps.push({ key: "ended", label: statusLabels[job.status], at: job.endedAt, note, tone });
  }
  return steps;
}
