import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import path from "node:path";
import type { Job } from "@corral/shared";
import type { Client } from "@modelcontextprotocol/client";
import { ProtocolError } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient, type JsonRpcResponse, resultFromTaskOutcome } from "@modelcontextprotocol/ext-tasks/client";
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

const getTask = async (taskId: string) =>
  GetTaskResultV2Schema.parse(resultOf(await rawRequest(server, "/mcp", { method: "tasks/get", params: { taskId } })));

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

  test("a client without the extension, and every tool but _run, get the plain result", async () => {
    const result = await plain.callTool({ name: "free_run", arguments: { prompt: "print 1", workdir: workdir() } });
    expect(textOf(result)).toMatch(/^ok\n/);
    const raw = resultOf(
      await rawRequest(
        server,
        "/mcp",
        { method: "tools/call", params: { name: "free_run", arguments: { prompt: "print 1", workdir: workdir() } } },
        {},
      ),
    );
    expect(raw).toMatchObject({ resultType: "complete" });
    expect(textOf(raw)).toMatch(/^ok\n/);
    const started = resultOf(
      await rawRequest(server, "/mcp", {
        method: "tools/call",
        params: { name: "free_run_async", arguments: { prompt: "print 1", workdir: workdir() } },
      }),
    );
    expect(started).toMatchObject({ resultType: "complete" });
    expect(textOf(started)).toMatch(/^\w+$/);
    // The same client's SDK calls of other tools are unchanged.
    expect(textOf(await tasks.callTool({ name: "free_done", arguments: { job_id: textOf(started) } }))).toMatch(/^(pendiente|listo)/);
  });

  test("a job that fails is a completed call whose result is the error a plain _run answers", async () => {
    const created = await startTask({ prompt: "stderr boom\nexit 3" });
    const task = await until(async () => {
      const t = await getTask(created.taskId);
      return t.status === "working" ? undefined : t;
    });
    expect(task.status).toBe("completed");
    if (task.status !== "completed") throw new Error("not completed");
    expect(task.statusMessage).toMatch(/ failed: exit code 3$/);
    expect(textOf(task.result)).toMatch(/^error: exit code 3/);
  });

  test("tasks/cancel acknowledges, cancels the job and kills its worker; the task reads cancelled", async () => {
    const created = await startTask({ prompt: "print 1\nhang" });
    const jobId = jobOf(created);
    const pid = await until(async () => (await api<Job>(server, "GET", `/api/jobs/${jobId}`)).body.pid ?? undefined);
    expect(groupAlive(pid)).toBe(true);
    const ack = CancelTaskResultV2Schema.parse(
      resultOf(await rawRequest(server, "/mcp", { method: "tasks/cancel", params: { taskId: created.taskId } })),
    );
    expect(ack).toEqual({ resultType: "complete", _meta: expect.anything() });
    expect(groupAlive(pid)).toBe(false);
    const job = (await api<Job>(server, "GET", `/api/jobs/${jobId}`)).body;
    expect(job.status).toBe("cancelled");
    expect(job.cancel?.by).toBe("mcp");
    const task = await getTask(created.taskId);
    expect(task.status).toBe("cancelled");
    expect(task.statusMessage).toMatch(/cancelled by request$/);
    // Cancelling an ended task again is acknowledged, and changes nothing.
    resultOf(await rawRequest(server, "/mcp", { method: "tasks/cancel", params: { taskId: created.taskId } }));
    expect((await getTask(created.taskId)).status).toBe("cancelled");
  });

  test("tasks/update is acknowledged and changes nothing: Corral's tasks never ask for input", async () => {
    const created = await startTask({ prompt: "print 1" });
    const answer = await rawRequest(server, "/mcp", {
      method: "tasks/update",
      params: { taskId: created.taskId, inputResponses: { name: { action: "accept", content: {} } } },
    });
    expect(answer.kind, JSON.stringify(answer)).toBe("result");
    await until(async () => ((await getTask(created.taskId)).status === "completed" ? true : undefined));
  });

  test("an unknown id, a job id, an expired task are refused with -32602; tasks/* from a client without the extension with -32021", async () => {
    const created = await startTask({ prompt: "print 1" });
    const jobId = jobOf(created);
    for (const taskId of [randomUUID(), jobId]) {
      for (const method of ["tasks/get", "tasks/cancel", "tasks/update"]) {
        const err = errorOf(await rawRequest(server, "/mcp", { method, params: { taskId } }));
        expect(err.code, method).toBe(-32602);
        expect(err.message, method).toMatch(/Task not found/);
      }
    }
    await until(async () => ((await getTask(created.taskId)).status === "completed" ? true : undefined));
    const expired = { id: randomUUID(), jobId, sessionId: "", createdAt: Date.now() - 10_000, ttlMs: 1, cancelledAt: null };
    await server.services.mcpTasks.insert(expired);
    const gone = errorOf(await rawRequest(server, "/mcp", { method: "tasks/get", params: { taskId: expired.id } }));
    expect(gone.code).toBe(-32602);
    expect(gone.message).toMatch(/Task has expired/);
    const undeclared = errorOf(await rawRequest(server, "/mcp", { method: "tasks/get", params: { taskId: created.taskId } }, {}));
    expect(undeclared.code).toBe(-32021);
    expect(undeclared.data).toEqual({ requiredCapabilities: { extensions: { [TASKS_EXTENSION_ID_V2]: {} } } });
    // tasks/list is not part of the extension.
    expect(errorOf(await rawRequest(server, "/mcp", { method: "tasks/list", params: {} })).code).toBe(-32601);
  });

  test("bad arguments name the field, and start nothing", async () => {
    const before = (await api<{ total: number }>(server, "GET", "/api/jobs")).body.total;
    const err = errorOf(
      await rawRequest(server, "/mcp", { method: "tools/call", params: { name: "free_run", arguments: { prompt: "", workdir: workdir() } } }),
    );
    expect(err.code).toBe(-32602);
    expect(err.message).toMatch(/^error: prompt: /);
    const outside = errorOf(
      await rawRequest(server, "/mcp", { method: "tools/call", params: { name: "free_run", arguments: { prompt: "print 1", workdir: "/" } } }),
    );
    expect(outside.message).toMatch(/^error: workdir: /);
    expect((await api<{ total: number }>(server, "GET", "/api/jobs")).body.total).toBe(before);
  });

  test("the SDK client's own requests reach the task by its id, on any mount", async () => {
    const created = await startTask({ prompt: "print 1" }, "free_run", "/mcp/free");
    const task = await until(async () => {
      const t = DetailedTaskV2Schema.parse(await tasks.request({ method: "tasks/get", params: { taskId: created.taskId } }, DetailedTaskV2Schema));
      return t.status === "completed" ? t : undefined;
    });
    if (task.status !== "completed") throw new Error("not completed");
    expect(textOf(task.result)).toMatch(/^ok\n/);
    // Without the extension declared, the SDK's client is refused.
    const refused = await plain.request({ method: "tasks/get", params: { taskId: created.taskId } }, DetailedTaskV2Schema).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(ProtocolError);
    expect((refused as ProtocolError).code).toBe(-32021);
  });

  test("ext-tasks' own requester runs _run as a task to its result", async () => {
    const client = await connectModern(server, "/mcp/free", true);
    cleanups.push(() => client.close());
    const session = createTaskSessionFromClient(client, {
      endpointId: "corral-test",
      // The requester frames each request itself (envelope, capabilities); what came back is JSON.
      rawDispatch: async (request) => (await rawRequest(server, "/mcp/free", request as never, FRAMING.clientCapabilities)) as JsonRpcResponse,
      v2RequestFraming: FRAMING,
    });
    try {
      const execution = await session.callTool("free_run", { prompt: "print 1\nwrite r.txt x", workdir: workdir() });
      const { outcome, lastTask } = await execution.settle();
      // It ran as a task, polled to completion (not answered at once).
      expect(lastTask?.status).toBe("completed");
      const result = resultFromTaskOutcome(outcome);
      expect(textOf(result)).toMatch(/^ok\n/);
      expect(textOf(result)).toContain("created: r.txt");
    } finally {
      await session.close();
    }
  });
});
