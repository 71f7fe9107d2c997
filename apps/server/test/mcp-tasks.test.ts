import { rmSync } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Job } from "@corral/shared";
import { groupAlive } from "../src/jobs/process-group.js";
import { jobDataPaths } from "../src/jobs/worker-process.js";
import { api, killGroupOf, sleep, startServer, tempDir, until, type TestServer } from "./helpers.js";
import { connectMcp, textOf } from "./mcp-client.js";
import { cancelTask, CreateTaskResultSchema, getTask, getTaskResult, listTasks, type Task } from "./tasks-2025.js";

/**
 * MCP Tasks (spec 2025-11-25, so always over a 2025-11-25 session) for `<agent>_run`:
 * a task-augmented call answers at once with a task backed by the job, polled to its result;
 * plain calls are as they were.
 */

const root = tempDir();
let server: TestServer;
let mcp: Client;
const cleanups: (() => Promise<unknown>)[] = [];
let n = 0;
const workdir = () => path.join(root, `w${++n}`);

beforeAll(async () => {
  server = await startServer({}, { root });
  cleanups.push(() => server.close());
  mcp = await connectMcp(server, "/mcp", server.auth, "legacy");
  cleanups.push(() => mcp.close());
  await server.services.agents.create({ name: "free", kind: "kiro", maxConcurrent: 10 });
  // The SDK client learns from tools/list which tools take a task.
  await mcp.listTools();
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  rmSync(root, { recursive: true, force: true });
});

/** Starts `<agent>_run` as a task; resolves with the task the server answered at once. */
async function startTask(client: Client, agent: string, args: Record<string, unknown>, ttl = 60_000): Promise<Task> {
  const created = await client.request(
    { method: "tools/call", params: { name: `${agent}_run`, arguments: { workdir: workdir(), ...args }, task: { ttl } } },
    CreateTaskResultSchema,
  );
  return created.task;
}

const jobOf = (task: Task): string => {
  const id = /job (\w+)/.exec(task.statusMessage ?? "")?.[1];
  if (!id) throw new Error(`no job in ${task.statusMessage}`);
  return id;
};

const reachStatus = (client: Client, taskId: string, wanted: Task["status"], timeoutMs = 20_000) =>
  until(
    async () => {
      const task = await getTask(client, taskId);
      return task.status === wanted ? task : undefined;
    },
    timeoutMs,
    `task ${taskId} ${wanted}`,
  );

async function resultText(client: Client, taskId: string): Promise<{ text: string; meta: unknown }> {
  const result = await getTaskResult(client, taskId);
  return { text: textOf(result), meta: result._meta?.["io.modelcontextprotocol/related-task"] };
}

async function mcpError(call: Promise<unknown>): Promise<ProtocolError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProtocolError);
  return err as ProtocolError;
}

describe("MCP tasks for <agent>_run", () => {
  test("the server announces tasks, and tools/list marks only the _run tools as taking one", async () => {
    expect(mcp.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const { tools } = await mcp.listTools();
    const support = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport]));
    expect(support.kiro_run).toBe("optional");
    expect(support.free_run).toBe("optional");
    // No taskSupport is "forbidden" (the spec's default), which SDK v2 leaves out.
    expect(support.kiro_run_async).toBeUndefined();
    expect(support.kiro_done).toBeUndefined();
    expect(support.corral_wait).toBeUndefined();
  });

  test("a task-augmented _run answers at once with a working task, polled to completion with what a plain _run answers", async () => {
    const seen: string[] = [];
    const created: Task | undefined = await startTask(mcp, "free", { prompt: "print 2\nsleep 1\nwrite t.txt done" });
    seen.push("taskCreated");
    for (;;) {
      const task = await getTask(mcp, created.taskId);
      if (seen.at(-1) !== `status ${task.status}`) seen.push(`status ${task.status}`);
      if (task.status !== "working") break;
      await sleep(task.pollInterval ?? 100);
    }
    const text = textOf(await getTaskResult(mcp, created.taskId));
    seen.push("result");
    expect(created?.status).toBe("working");
    expect(created?.ttl).toBe(60_000);
    expect(created?.pollInterval).toBeGreaterThan(0);
    expect(created?.taskId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // Polled while the job ran, then completed.
    expect(seen[0]).toBe("taskCreated");
    expect(seen).toContain("status working");
    expect(seen.at(-2)).toBe("status completed");
    expect(seen.at(-1)).toBe("result");
    expect(text).toMatch(/^ok\n/);
    expect(text).toContain("created: t.txt");
    const jobId = jobOf(created as Task);
    expect(text).toContain(`job ${jobId} · agent free · succeeded`);
    // The task is the job's: the same job as REST sees it, with the same answer as tasks/result again.
    expect((await api<Job>(server, "GET", `/api/jobs/${jobId}`)).body.status).toBe("succeeded");
    const again = await resultText(mcp, created?.taskId as string);
    expect(again.text).toBe(text);
    expect(again.meta).toEqual({ taskId: created?.taskId });
  });

  test("a plain _run is as before: it runs to the end and answers ok, and makes no task", async () => {
    const before = (await listTasks(mcp)).tasks.length;
    const result = await mcp.callTool({ name: "free_run", arguments: { prompt: "print 1", workdir: workdir() } });
    expect(textOf(result), JSON.stringify(result)).toMatch(/^ok\n/);
    expect(result.isError).toBeUndefined();
    const failed = await mcp.callTool({ name: "free_run", arguments: { prompt: "stderr boom\nexit 3", workdir: workdir() } });
    expect(textOf(failed)).toMatch(/^error: exit code 3/);
    expect((await listTasks(mcp)).tasks.length).toBe(before);
  });

  test("tasks/result blocks until the job ends", async () => {
    const task = await startTask(mcp, "free", { prompt: "sleep 1\nprint 1" });
    const { text } = await resultText(mcp, task.taskId);
    expect(text).toMatch(/^ok\n/);
    expect((await getTask(mcp, task.taskId)).status).toBe("completed");
  });

  test("tasks/cancel cancels the task and its job, killing the worker; cancelling it again is refused", async () => {
    const task = await startTask(mcp, "free", { prompt: "print 1\nhang" });
    const jobId = jobOf(task);
    const pid = await until(async () => (await api<Job>(server, "GET", `/api/jobs/${jobId}`)).body.pid ?? undefined);
    expect(groupAlive(pid)).toBe(true);
    const cancelled = await cancelTask(mcp, task.taskId);
    expect(cancelled.status).toBe("cancelled");
    expect(cancelled.pollInterval).toBeUndefined();
    expect(groupAlive(pid)).toBe(false);
    const job = (await api<Job>(server, "GET", `/api/jobs/${jobId}`)).body;
    expect(job.status).toBe("cancelled");
    expect(job.cancel?.by).toBe("mcp");
    expect((await getTask(mcp, task.taskId)).status).toBe("cancelled");
    expect((await resultText(mcp, task.taskId)).text).toMatch(/^error: cancelled/);
    const again = await mcpError(cancelTask(mcp, task.taskId));
    expect(again.code).toBe(ProtocolErrorCode.InvalidParams);
    expect(again.message).toMatch(/already in terminal status 'cancelled'/);
  });

  test("a task for an unknown id, or a job id, is not found; a bad cursor is refused", async () => {
    const task = await startTask(mcp, "free", { prompt: "print 1" });
    for (const id of ["00000000-0000-4000-8000-000000000000", jobOf(task)]) {
      // One at a time: made together, an answer refused before the one awaited would be a rejection nobody handles yet.
      for (const call of [() => getTask(mcp, id), () => getTaskResult(mcp, id), () => cancelTask(mcp, id)]) {
        const err = await mcpError(call());
        expect(err.code).toBe(ProtocolErrorCode.InvalidParams);
        expect(err.message).toMatch(/Task not found/);
      }
    }
    const badCursor = await mcpError(listTasks(mcp, "not-a-cursor"));
    expect(badCursor.code).toBe(ProtocolErrorCode.InvalidParams);
    expect(badCursor.message).toMatch(/Invalid cursor/);
  });

  test("a task on a tool that takes none is refused before anything runs; bad arguments name the field", async () => {
    const jobsBefore = (await api<{ total: number }>(server, "GET", "/api/jobs")).body.total;
    const async = await mcpError(
      mcp.request(
        { method: "tools/call", params: { name: "free_run_async", arguments: { prompt: "print 1", workdir: workdir() }, task: {} } },
        CreateTaskResultSchema,
      ),
    );
    expect(async.code).toBe(ProtocolErrorCode.MethodNotFound);
    expect(async.message).toMatch(/free_run_async does not run as a task/);
    const bad = await mcpError(startTask(mcp, "free", { prompt: "" }));
    expect(bad.code).toBe(ProtocolErrorCode.InvalidParams);
    expect(bad.message).toMatch(/^error: prompt: /);
    const badTtl = await mcpError(
      mcp.request(
        { method: "tools/call", params: { name: "free_run", arguments: { prompt: "print 1", workdir: workdir() }, task: { ttl: "soon" } } },
        CreateTaskResultSchema,
      ),
    );
    expect(badTtl.code).toBe(ProtocolErrorCode.InvalidParams);
    expect(badTtl.message).toMatch(/error: task\.ttl: /);
    const outside = await mcpError(startTask(mcp, "free", { prompt: "print 1", workdir: "/" }));
    expect(outside.message).toMatch(/error: workdir: /);
    expect((await api<{ total: number }>(server, "GET", "/api/jobs")).body.total).toBe(jobsBefore);
  });

  test("tasks/list lists this session's tasks newest first, a page at a time; another session sees none of them", async () => {
    const other = await connectMcp(server, "/mcp", server.auth, "legacy");
    cleanups.push(() => other.close());
    const mine = await startTask(mcp, "free", { prompt: "print 1" });
    const theirs = await startTask(other, "free", { prompt: "print 1" });

    const first = await listTasks(mcp);
    expect(first.tasks[0]?.taskId).toBe(mine.taskId);
    expect(first.tasks.map((t) => t.taskId)).not.toContain(theirs.taskId);
    const otherList = await listTasks(other);
    expect(otherList.tasks.map((t) => t.taskId)).toEqual([theirs.taskId]);

    // More tasks than a page: rows straight in the registry, all on one ended job.
    const sessionId = (mcp.transport as { sessionId?: string }).sessionId as string;
    const ended = await reachStatus(mcp, mine.taskId, "completed");
    for (let i = 0; i < 60; i++) {
      await server.services.mcpTasks.insert({
        id: `page-${String(i).padStart(2, "0")}`,
        jobId: jobOf(ended),
        sessionId,
        createdAt: 1000 + i,
        ttlMs: 3_600_000 * 24 * 365 * 100,
        cancelledAt: null,
      });
    }
    const ids: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await listTasks(mcp, cursor);
      ids.push(...page.tasks.map((t) => t.taskId));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBeGreaterThan(1);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toContain(mine.taskId);
    expect(ids.filter((id) => id.startsWith("page-"))).toEqual(Array.from({ length: 60 }, (_, i) => `page-${String(59 - i).padStart(2, "0")}`));
    expect(ids).not.toContain(theirs.taskId);
  });

  test("a task ended past its time to live is gone", async () => {
    const task = await startTask(mcp, "free", { prompt: "print 1" }, 1);
    await sleep(50);
    // Still reachable while its job runs, whatever its ttl; once the job ended, expired.
    const jobId = jobOf(task);
    await until(async () => ((await api<Job>(server, "GET", `/api/jobs/${jobId}`)).body.status === "succeeded" ? true : undefined));
    const err = await mcpError(getTask(mcp, task.taskId));
    expect(err.message).toMatch(/Task has expired/);
    expect((await listTasks(mcp)).tasks.map((t) => t.taskId)).not.toContain(task.taskId);
  });
});

describe("a task in every state of its job", () => {
  test("queued behind the agent's concurrency, running, and each ended status", async () => {
    await server.services.agents.update("kiro", { maxConcurrent: 1 });
    const running = await startTask(mcp, "kiro", { prompt: "print 1\nhang" });
    await until(async () => ((await getTask(mcp, running.taskId)).statusMessage?.endsWith("running") ? true : undefined));
    const queued = await startTask(mcp, "kiro", { prompt: "print 1" });
    const waiting = await getTask(mcp, queued.taskId);
    expect(waiting.status).toBe("working");
    expect(waiting.statusMessage).toMatch(/queued, waiting for a free slot$/);
    expect(waiting.pollInterval).toBeGreaterThan(0);

    const failed = await startTask(mcp, "free", { prompt: "stderr boom\nexit 3" });
    const timedOut = await startTask(mcp, "free", { prompt: "print 1\nhang", timeout_s: 1 });
    const overBudget = await startTask(mcp, "opencode", { prompt: "write a.txt x\nsleep 30\nwrite b.txt y", max_tokens: 500 });
    const cancelledByRest = await startTask(mcp, "free", { prompt: "print 1\nhang" });
    await until(async () => ((await getTask(mcp, cancelledByRest.taskId)).statusMessage?.endsWith("running") ? true : undefined));
    await api(server, "POST", `/api/jobs/${jobOf(cancelledByRest)}/cancel`);

    const expectations: [Task, Task["status"], RegExp, RegExp][] = [
      [failed, "failed", / failed: exit code 3$/, /^error: exit code 3/],
      [timedOut, "failed", / timed_out: timed out after 1 s/, /^error: timed out after 1 s/],
      [overBudget, "failed", / budget_exceeded: budget exceeded/, /^error: budget exceeded/],
      [cancelledByRest, "cancelled", / cancelled: cancelled/, /^error: cancelled/],
    ];
    for (const [task, status, message, answer] of expectations) {
      const ended = await reachStatus(mcp, task.taskId, status, 30_000);
      expect(ended.statusMessage).toMatch(message);
      expect(Date.parse(ended.lastUpdatedAt)).toBeGreaterThanOrEqual(Date.parse(ended.createdAt));
      expect((await resultText(mcp, task.taskId)).text).toMatch(answer);
    }

    // The running one ends: the queued one gets the slot and completes.
    await cancelTask(mcp, running.taskId);
    await reachStatus(mcp, queued.taskId, "completed");
    expect((await resultText(mcp, queued.taskId)).text).toMatch(/^ok\n/);
  }, 60_000);

  test("a task whose worker died while the server was down is failed (lost) after a restart, reached by its id from a new session", async () => {
    const restartRoot = tempDir();
    const first = await startServer({}, { root: restartRoot });
    const client = await connectMcp(first, "/mcp", first.auth, "legacy");
    const created = await client.request(
      { method: "tools/call", params: { name: "kiro_run", arguments: { prompt: "print 2\nhang", workdir: path.join(restartRoot, "w") }, task: {} } },
      CreateTaskResultSchema,
    );
    const jobId = jobOf(created.task);
    const pid = await until(async () => (await first.services.jobs.get(jobId)).pid ?? undefined);
    await sleep(300);
    await client.close();
    await first.app.close();
    killGroupOf(pid);
    await sleep(300);
    rmSync(jobDataPaths(path.join(restartRoot, "data"), jobId, 1).exit, { force: true });

    const second = await startServer({}, { root: restartRoot });
    const again = await connectMcp(second, "/mcp", second.auth, "legacy");
    try {
      expect((await listTasks(again)).tasks).toEqual([]);
      const lost = await getTask(again, created.task.taskId);
      expect(lost.status).toBe("failed");
      expect(lost.statusMessage).toMatch(/ lost: the worker ended while the server was down/);
      expect((await resultText(again, created.task.taskId)).text).toMatch(/^error: the worker ended while the server was down/);
      // Reached by its id, it is this session's now.
      expect((await listTasks(again)).tasks.map((t) => t.taskId)).toEqual([created.task.taskId]);
    } finally {
      await again.close();
      await second.app.close();
      rmSync(restartRoot, { recursive: true, force: true });
    }
  }, 60_000);
});
