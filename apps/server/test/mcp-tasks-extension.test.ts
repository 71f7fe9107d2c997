import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import path from "node:path";
import type { Job } from "@corral/shared";
import type { Client } from "@modelcontextprotocol/client";
import { ProtocolError } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient, resultFromTaskOutcome } from "@modelcontextprotocol/ext-tasks/client";
import {
  CancelTaskResultV2Schema,
  CreateTaskResultV2Schema,
  DetailedTaskV2Schema,
  GetTaskResultV2Schema,
  ServerTaskCapabilityEnvelopeV2Schema,
  TASKS_EXTENSION_ID_V2,
} from "@modelcontextprotocol/ext-tasks/core/v2";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { groupAlive } from "../src/jobs/process-group.js";
import { api, sleep, startServer, tempDir, until, type TestServer } from "./helpers.js";
import { textOf } from "./mcp-client.js";
import { connectModern, FRAMING, rawRequest, type WireAnswer, type WireError } from "./tasks-2026.js";

/**
 * The Tasks extension of MCP 2026-07-28 (`io.modelcontextprotocol/tasks`) for `<agent>_run`: a
 * client declaring it gets a task for `_run`, polls `tasks/get` to the answer a plain `_run` gives,
 * cancels it with `tasks/cancel`; a client without it gets the plain result.
 */

const root = tempDir();
let server: TestServer;
let tasks: Client;
let plain: Client;
const cleanups: (() => Promise<unknown>)[] = [];
let n = 0;
const workdir = () => path.join(root, `w${++n}`);

beforeAll(async () => {
  server = await startServer({}, { root });
  cleanups.push(() => server.close());
  await server.services.agents.create({ name: "free", kind: "kiro", maxConcurrent: 10 });
  tasks = await connectModern(server, "/mcp", true);
  cleanups.push(() => tasks.close());
  plain = await connectModern(server, "/mcp", false);
  cleanups.push(() => plain.close());
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  rmSync(root, { recursive: true, force: true });
});

const resultOf = (answer: WireAnswer): unknown => {
  if (answer.kind === "error") throw new Error(`error ${answer.error.code}: ${answer.error.message}`);
  return answer.result;
};
const errorOf = (answer: WireAnswer): WireError => {
  if (answer.kind === "result") throw new Error(`expected an error, got ${JSON.stringify(answer.result)}`);
  return answer.error;
};

/** `<agent>_run` from a client declaring the extension; the task it answered with. */
async function startTask(args: Record<string, unknown>, tool = "free_run", mount = "/mcp") {
  const answer = await rawRequest(server, mount, { method: "tools/call", params: { name: tool, arguments: { workdir: workdir(), ...args } } });
  return CreateTaskResultV2Schema.parse(resultOf(answer));
}

const getTask = async (taskId: string) => GetTaskResultV2Schema.parse(resultOf(await rawRequest(server, "/mcp", { method: "tasks/get", params: { taskId } })));

const jobOf = (task: { statusMessage?: string | undefined }): string => {
  const id = /job (\w+)/.exec(task.statusMessage ?? "")?.[1];
  if (!id) throw new Error(`no job in ${task.statusMessage}`);
  return id;
};

describe("the 2026-07-28 Tasks extension for <agent>_run", () => {
  test("server/discover declares the extension, with no settings", async () => {
    const capabilities = tasks.getServerCapabilities();
    expect(ServerTaskCapabilityEnvelopeV2Schema.parse(capabilities).extensions?.[TASKS_EXTENSION_ID_V2]).toEqual({});
    // The 2025-11-25 tasks capability is not this era's.
    expect((capabilities as Record<string, unknown>).tasks).toBeUndefined();
  });

  test("a _run answers at once with a working task, polled with tasks/get to what a plain _run answers", async () => {
    const created = await startTask({ prompt: "print 2\nsleep 1\nwrite t.txt done" });
    expect(created.resultType).toBe("task");
    expect(created.status).toBe("working");
    expect(created.taskId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(created.ttlMs).toBe(60 * 60_000);
    expect(created.pollIntervalMs).toBeGreaterThan(0);
    const seen: string[] = [];
    let task = await getTask(created.taskId);
    while (task.status === "working") {
      if (seen.at(-1) !== task.status) seen.push(task.status);
      expect(task.resultType).toBe("complete");
      await sleep(task.pollIntervalMs ?? 100);
      task = await getTask(created.taskId);
    }
    seen.push(task.status);
    expect(seen).toEqual(["working", "completed"]);
    if (task.status !== "completed") throw new Error("not completed");
    expect(task.pollIntervalMs).toBeUndefined();
    const jobId = jobOf(created);
    const text = textOf(task.result);
    expect(text).toMatch(/^ok\n/);
    expect(text).toContain("created: t.txt");
    expect(text).toContain(`job ${jobId} · agent free · succeeded`);
    expect(task.result.resultType).toBe("complete");
    expect((await api<Job>(server, "GET", `/api/jobs/${jobId}`)).body.status).toBe("succeeded");
  });
});
