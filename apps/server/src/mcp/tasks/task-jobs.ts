import { randomUUID } from "node:crypto";
import { McpJobInputSchema, type Job } from "@corral/shared";
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import type { Actor } from "../../audit/service.js";
import type { McpTaskRow } from "../../db/schema.js";
import { parseInput } from "../../lib/errors.js";
import type { Services } from "../../services.js";
import { inMcpNames, launchRequestOf } from "../launch-input.js";
import { isExpired } from "./task-view.js";

/**
 * What a task is to Corral, in either protocol revision: a row of `mcp_tasks` naming the job a
 * task-run `<agent>_run` started. The revisions differ only in how they tell of it (task-view.ts)
 * and which requests reach it (index.ts for 2025-11-25, extension.ts for 2026-07-28).
 */

export interface TaskStart {
  agent: string;
  /** The call's arguments, parsed as a plain `_run`'s are. */
  args: unknown;
  ttlMs: number;
  /** The 2025-11-25 session that lists it; empty for a 2026-07-28 task, which no session lists. */
  sessionId: string;
  actor: Actor;
}

/** Launches the job as a plain call's would be and records its task; a bad argument is a `ServiceError` naming it. */
export async function startTask(services: Services, start: TaskStart): Promise<[McpTaskRow, Job]> {
  const input = parseInput(McpJobInputSchema, start.args ?? {});
  const job = await inMcpNames(() => services.launches.launch(start.agent, launchRequestOf(input), "mcp", start.actor.client));
  // A random UUID, told only to the call that made it: with one credential, the id is what reaches the task.
  const row: McpTaskRow = {
    id: randomUUID(),
    jobId: job.id,
    sessionId: start.sessionId,
    createdAt: job.createdAt,
    ttlMs: start.ttlMs,
    cancelledAt: null,
  };
  try {
    await services.mcpTasks.removeExpired(Date.now());
    await services.mcpTasks.insert(row);
  } catch (err) {
    // No task to follow it by: the job goes too.
    void services.cancels.cancel(job.id, start.actor).catch(() => undefined);
    throw err;
  }
  return [row, job];
}

/** The task and its job, from any request or session; "not found" if it is unknown, "expired" past its time to live. */
export async function reachTask(services: Services, taskId: string): Promise<[McpTaskRow, Job]> {
  const row = await services.mcpTasks.get(taskId);
  const job = row && (await services.jobs.find(row.jobId));
  if (!row || !job) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Failed to retrieve task: Task not found: ${taskId}`);
  if (isExpired(row, job)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Failed to retrieve task: Task has expired: ${taskId}`);
  return [row, job];
}

/** The task is marked cancelled first (both revisions ask it before the answer), then its job is cancelled, its worker killed. */
export async function cancelTask(services: Services, row: McpTaskRow, actor: Actor): Promise<[McpTaskRow, Job]> {
  await services.mcpTasks.cancel(row.id, Date.now());
  const ended = await services.cancels.cancel(row.jobId, actor);
  return [(await services.mcpTasks.get(row.id)) ?? row, ended];
}
