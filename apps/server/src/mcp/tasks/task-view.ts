import { isFinalStatus, type Job, type JobStatus } from "@corral/shared";
import { ProtocolError, ProtocolErrorCode, type Task } from "@modelcontextprotocol/server";
import type { TaskPageStart } from "../../db/registry.js";
import type { McpTaskRow } from "../../db/schema.js";
import type { McpEra } from "../era.js";

/** How often a client is asked to poll `tasks/get`. */
export const TASK_POLL_INTERVAL_MS = 1000;
/** A task is kept this long after it was created unless the client asks for less. */
export const DEFAULT_TASK_TTL_MS = 60 * 60_000;
/** The longest a task is kept, whatever the client asks (its job stays in the registry). */
export const MAX_TASK_TTL_MS = 24 * 60 * 60_000;
/** Tasks per `tasks/list` page. */
export const TASKS_PER_PAGE = 50;

type TaskStatus = Task["status"];

/** How each job status reads as a 2025-11-25 task. */
const TASK_STATUS: Record<JobStatus, TaskStatus> = {
  queued: "working",
  running: "working",
  succeeded: "completed",
  failed: "failed",
  timed_out: "failed",
  budget_exceeded: "failed",
  lost: "failed",
  cancelled: "cancelled",
};

/** The time to live a task gets: what the client asked for, at most `MAX_TASK_TTL_MS`. */
export function taskTtl(requested: number | null | undefined): number {
  if (requested === undefined || requested === null || !Number.isFinite(requested)) return DEFAULT_TASK_TTL_MS;
  return Math.min(Math.max(0, Math.round(requested)), MAX_TASK_TTL_MS);
}

/**
 * A task's status, read from its job (a cancelled task stays cancelled). The two revisions part on
 * a job that ended in error: 2025-11-25 counts a tool call whose answer is an error as `failed`;
 * the 2026-07-28 extension keeps `failed` for JSON-RPC errors, so there the call `completed`, its
 * result the `error: …` answer a plain `_run` gives.
 */
export function taskStatus(row: McpTaskRow, job: Job, era: McpEra): TaskStatus {
  if (row.cancelledAt !== null) return "cancelled";
  const status = TASK_STATUS[job.status];
  return era === "modern" && status === "failed" ? "completed" : status;
}

/** What both revisions tell of a task; each adds its time to live and poll interval under its own names. */
export function taskFields(row: McpTaskRow, job: Job, era: McpEra) {
  const updated = Math.max(row.cancelledAt ?? 0, job.endedAt ?? job.startedAt ?? job.createdAt, row.createdAt);
  return {
    taskId: row.id,
    status: taskStatus(row, job, era),
    statusMessage: statusMessage(row, job),
    createdAt: new Date(row.createdAt).toISOString(),
    lastUpdatedAt: new Date(updated).toISOString(),
  };
}

/** The task as the 2025-11-25 revision describes it. */
export function taskOf(row: McpTaskRow, job: Job): Task {
  const fields = taskFields(row, job, "legacy");
  return { ...fields, ttl: row.ttlMs, ...(isTerminal(fields.status) ? {} : { pollInterval: TASK_POLL_INTERVAL_MS }) };
}

export function isTerminal(status: TaskStatus): boolean {
  return status === "completed" || status === "failed" || status === "cancelled";
}

/** Past its time to live with its job ended: answered as expired, deleted at the next sweep. */
export function isExpired(row: McpTaskRow, job: Job, now = Date.now()): boolean {
  return row.createdAt + row.ttlMs <= now && isFinalStatus(job.status);
}

/** Names the job, so a client can also follow it with `<agent>_done` or the panel. */
function statusMessage(row: McpTaskRow, job: Job): string {
  const about = `job ${job.id} (${job.agent})`;
  if (row.cancelledAt !== null) return `${about} cancelled by request`;
  if (job.status === "queued") return job.attempt > 1 ? `${about} queued for attempt ${job.attempt}` : `${about} queued, waiting for a free slot`;
  if (job.status === "running") return `${about} running`;
  if (job.status === "succeeded") return `${about} succeeded`;
  return `${about} ${job.status}: ${(job.error ?? job.status).split("\n")[0]}`;
}

/** Opaque to clients: where the next page starts. */
export function encodeCursor(start: TaskPageStart): string {
  return Buffer.from(JSON.stringify([start.createdAt, start.id])).toString("base64url");
}

export function decodeCursor(cursor: string): TaskPageStart {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(value) && value.length === 2 && Number.isSafeInteger(value[0]) && typeof value[1] === "string") {
      return { createdAt: value[0] as number, id: value[1] };
    }
  } catch {
    // Answered below: a cursor this server did not hand out.
  }
  throw new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    "Invalid cursor: pass the nextCursor of a previous tasks/list, or none for the first page",
  );
}
