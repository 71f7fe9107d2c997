import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterEach, beforeEach, expect, test } from "vitest";
import { openDb, type DbHandle } from "../client.js";
import { createAgentsRepo } from "./agents.js";
import { createJobsRepo, type JobsRepo } from "./jobs.js";

let handle: DbHandle;
let dir: string;
let jobs: JobsRepo;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "corral-jobs-repo-"));
  handle = openDb(path.join(dir, "corral.db"));
  createAgentsRepo(handle.db).insert({
    name: "a",
    kind: "command",
    command: "/bin/true",
    provider: "local",
    workdir: "/w",
    timeoutS: 60,
    maxConcurrent: 4,
    env: {},
    enabled: true,
    builtin: false,
    createdAt: 1,
    updatedAt: 1,
  });
  jobs = createJobsRepo(handle.db);
});
afterEach(() => {
  handle.close();
  rmSync(dir, { recursive: true, force: true });
});

const newJob = (id: string) =>
  jobs.insert({ id, agent: "a", status: "queued", prompt: "p", workdir: "/w", timeoutS: 60, origin: "rest", createdAt: 1, retry: null });

/** What SQLite itself holds, below drizzle's decoding: a JSON null must be NULL, not the text `null`. */
const stored = (id: string, column: string) =>
  handle.db.get<{ type: string }>(sql`select typeof(${sql.identifier(column)}) as type from jobs where id = ${id}`);

test("writes of different shapes through the prepared statements each store exactly their own columns", () => {
  newJob("j1");
  jobs.update("j1", { status: "running", pid: 5, startedAt: 2 });
  jobs.update("j1", { status: "failed", error: "boom", endedAt: 3 });
  expect(jobs.get("j1")).toMatchObject({ status: "failed", pid: 5, startedAt: 2, error: "boom", endedAt: 3 });
  jobs.update("j1", { error: null });
  expect(jobs.get("j1")).toMatchObject({ status: "failed", pid: 5, error: null });
  expect(jobs.update("missing", { status: "failed" })).toBeUndefined();
});

test("null in a JSON column is stored as NULL, by insert and by update, after a value of the same shape", () => {
  newJob("j2");
  expect(stored("j2", "retry").type).toBe("null");
  jobs.update("j2", { invocation: { command: "c", args: ["x"], cwd: "/w" } });
  expect(jobs.get("j2")?.invocation).toEqual({ command: "c", args: ["x"], cwd: "/w" });
  jobs.update("j2", { invocation: null });
  expect(stored("j2", "invocation").type).toBe("null");
  expect(jobs.get("j2")?.invocation).toBeNull();
});

test("an attempt is stored once, and its end updates only that attempt", () => {
  newJob("j3");
  jobs.startAttempt({ jobId: "j3", attempt: 1, status: "running", startedAt: 1, outputStart: 0 });
  jobs.startAttempt({ jobId: "j3", attempt: 1, status: "failed", startedAt: 9, outputStart: 9 });
  jobs.startAttempt({ jobId: "j3", attempt: 2, status: "running", startedAt: 5, outputStart: 10 });
  jobs.endAttempt("j3", 1, { status: "failed", exitCode: 75, error: "quota", endedAt: 4, outputEnd: 10 });
  expect(jobs.attempts("j3").map(({ attempt, status, startedAt, exitCode, endedAt }) => [attempt, status, startedAt, exitCode, endedAt])).toEqual([
    [1, "failed", 1, 75, 4],
    [2, "running", 5, null, null],
  ]);
});

test("whether a workdir is busy is read from an index, however many jobs wait elsewhere", () => {
  for (let i = 0; i < 50; i++) newJob(`q${i}`);
  jobs.insert({ id: "busy", agent: "a", status: "running", prompt: "p", workdir: "/busy", timeoutS: 60, origin: "rest", createdAt: 2, retry: null });
  expect(jobs.activeInWorkdir("/busy")?.id).toBe("busy");
  expect(jobs.activeInWorkdir("/idle")).toBeUndefined();
  const plan = handle.db.all<{ detail: string }>(
    sql`EXPLAIN QUERY PLAN SELECT id FROM jobs WHERE workdir = ${"/busy"} AND status IN ('queued', 'running') LIMIT 1`,
  );
  expect(plan.map((row) => row.detail).join("\n")).toMatch(/USING (COVERING )?INDEX jobs_workdir_status_idx/);
});
