import { JobStatusSchema, type Job } from "@corral/shared";
import { ProtocolError } from "@modelcontextprotocol/server";
import { expect, test } from "vitest";
import type { McpTaskRow } from "../../db/schema.js";
import { DEFAULT_TASK_TTL_MS, decodeCursor, encodeCursor, isExpired, MAX_TASK_TTL_MS, taskOf, taskTtl } from "./task-view.js";

const row: McpTaskRow = { id: "t1", jobId: "j1", sessionId: "s1", createdAt: 1_000, ttlMs: 60_000, cancelledAt: null };
const job = (patch: Partial<Job>) =>
  ({ id: "j1", agent: "gemini", status: "running", attempt: 1, error: null, createdAt: 1_000, startedAt: 2_000, endedAt: null, ...patch }) as Job;

test("the ttl is the one asked for, an hour when none is, never over a day", () => {
  expect(taskTtl(undefined)).toBe(DEFAULT_TASK_TTL_MS);
  expect(taskTtl(null)).toBe(DEFAULT_TASK_TTL_MS);
  expect(taskTtl(30_000)).toBe(30_000);
  expect(taskTtl(10 * MAX_TASK_TTL_MS)).toBe(MAX_TASK_TTL_MS);
  expect(taskTtl(-5)).toBe(0);
});

test("every job status maps to a task status; a cancelled task stays cancelled whatever its job did", () => {
  const expected = {
    queued: "working",
    running: "working",
    succeeded: "completed",
    failed: "failed",
    timed_out: "failed",
    budget_exceeded: "failed",
    lost: "failed",
    cancelled: "cancelled",
  } as const;
  for (const status of JobStatusSchema.options) {
    const ended = status !== "queued" && status !== "running";
    const task = taskOf(row, job({ status, endedAt: ended ? 5_000 : null, error: ended ? `${status} because\nmore` : null }));
    expect(task.status, status).toBe(expected[status]);
    expect(task.pollInterval === undefined, status).toBe(ended);
    if (expected[status] === "failed") expect(task.statusMessage).toBe(`job j1 (gemini) ${status}: ${status} because`);
  }
  const cancelled = taskOf({ ...row, cancelledAt: 9_000 }, job({ status: "succeeded", endedAt: 8_000 }));
  expect(cancelled.status).toBe("cancelled");
  expect(cancelled.lastUpdatedAt).toBe(new Date(9_000).toISOString());
});

test("a task expires once past its ttl with its job ended, never while the job runs", () => {
  expect(isExpired(row, job({ status: "running" }), 1_000_000)).toBe(false);
  expect(isExpired(row, job({ status: "succeeded", endedAt: 5_000 }), 60_999)).toBe(false);
  expect(isExpired(row, job({ status: "succeeded", endedAt: 5_000 }), 61_000)).toBe(true);
});

test("a cursor round-trips; anything else is refused as invalid params", () => {
  expect(decodeCursor(encodeCursor({ createdAt: 42, id: "t9" }))).toEqual({ createdAt: 42, id: "t9" });
  for (const bad of ["", "x", Buffer.from("[1]").toString("base64url"), Buffer.from('["1","a"]').toString("base64url")]) {
    expect(() => decodeCursor(bad)).toThrow(ProtocolError);
  }
});
