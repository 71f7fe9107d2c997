import { appendFileSync, rmSync } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { isFinalStatus, type Job, type JobStatus, type OutputPage } from "@corral/shared";
import { jobDataPaths } from "../src/jobs/worker-process.js";
import { startFakeOllama, type FakeOllama } from "./fixtures/fake-ollama.js";
import { api, killGroupOf, sleep, startServer, tempDir, until, type TestServer } from "./helpers.js";
import { connectMcp, textOf } from "./mcp-client.js";
import { WsClient } from "./ws-client.js";

/**
 * Every read of a job, over every door, in every state a job can be in: a queued job has no
 * output log yet, a job waiting to retry is queued again with output, a lost one was found dead
 * at start-up. Reading one must never answer 500 or take the process down.
 */

const root = tempDir();
let server: TestServer;
let mcp: Client;
let ws: WsClient;
let fake: FakeOllama;
const ids: Record<string, string> = {};
const idOf = (key: string): string => {
  const id = ids[key];
  if (!id) throw new Error(`no job for ${key}`);
  return id;
};
const cleanups: (() => Promise<unknown> | undefined)[] = [];

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  rmSync(root, { recursive: true, force: true });
});

let n = 0;
const workdir = () => path.join(root, `w${++n}`);
const status = async (id: string) => (await api<Job>(server, "GET", `/api/jobs/${id}`)).body;
const reach = (id: string, wanted: (job: Job) => boolean, what: string, timeoutMs = 20_000) =>
  until(
    async () => {
      const job = await status(id);
      return wanted(job) ? job : undefined;
    },
    timeoutMs,
    `job ${id} ${what}`,
  );

async function launch(body: Record<string, unknown>): Promise<string> {
  const res = await api<Job>(server, "POST", "/api/jobs", { workdir: workdir(), ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

/** The whole output through REST. */
async function restText(id: string): Promise<string> {
  const { status: code, body } = await api<OutputPage>(server, "GET", `/api/jobs/${id}/output?cursor=0&limit=4194304`);
  expect(code).toBe(200);
  return body.chunks.map((c) => c.text).join("");
}

async function tool(name: string, args: Record<string, unknown>): Promise<{ text: string; isError: boolean }> {
  const result = await mcp.callTool({ name, arguments: args });
  return { text: textOf(result), isError: result.isError === true };
}

/** The state each job is put in, what `_done` begins with, and its agent. */
const matrix: { key: string; agent: string; status: JobStatus; done: RegExp; attempt?: number }[] = [
  { key: "lost", agent: "kiro", status: "lost", done: /^error: / },
  { key: "running", agent: "kiro", status: "running", done: /^pendiente/ },
  { key: "queued", agent: "kiro", status: "queued", done: /^pendiente/ },
  { key: "cancelledQueued", agent: "kiro", status: "cancelled", done: /^error: cancelled before it started/ },
  { key: "retryWaiting", agent: "free", status: "queued", done: /^pendiente/, attempt: 2 },
  { key: "succeeded", agent: "free", status: "succeeded", done: /^listo/ },
  { key: "failed", agent: "free", status: "failed", done: /^error: exit code 3/ },
  { key: "timedOut", agent: "free", status: "timed_out", done: /^error: timed out after 1 s/ },
  { key: "cancelledRunning", agent: "free", status: "cancelled", done: /^error: cancelled/ },
  { key: "budget", agent: "opencode", status: "budget_exceeded", done: /^error: budget exceeded/ },
];

beforeAll(async () => {
  // A job lost while the server was down: its worker died and left no exit status.
  const first = await startServer({}, { root });
  const lost = await first.services.launches.launch("kiro", { prompt: "print 2\nhang", workdir: workdir() }, "rest");
  await until(async () => ((await first.services.jobs.get(lost.id)).pid ? true : undefined));
  await sleep(300);
  const pid = (await first.services.jobs.get(lost.id)).pid as number;
  await first.app.close();
  killGroupOf(pid);
  await sleep(300);
  rmSync(jobDataPaths(path.join(root, "data"), lost.id, 1).exit, { force: true });
  ids.lost = lost.id;

  fake = await startFakeOllama();
  cleanups.push(() => fake.close());
  server = await startServer({ CORRAL_OLLAMA_URL: fake.url }, { root });
  cleanups.push(() => server.close());
  expect((await status(idOf("lost"))).status).toBe("lost");
  mcp = await connectMcp(server);
  cleanups.push(() => mcp.close());
  ws = await WsClient.open(server);
  cleanups.push(() => ws.close());

  // kiro runs one job at a time: one hangs, so the next ones wait for its slot.
  await server.services.agents.update("kiro", { maxConcurrent: 1 });
  await server.services.agents.create({ name: "free", kind: "kiro", maxConcurrent: 10 });
  ids.running = await launch({ agent: "kiro", prompt: "print 3\nhang" });
  await reach(idOf("running"), (j) => j.status === "running", "running");
  await until(async () => ((await restText(idOf("running"))).includes("line 3") ? true : undefined));
  ids.queued = await launch({ agent: "kiro", prompt: "print 2\nwrite q.txt queued" });
  ids.cancelledQueued = await launch({ agent: "kiro", prompt: "print 1" });
  expect((await api<Job>(server, "POST", `/api/jobs/${idOf("cancelledQueued")}/cancel`)).body.status).toBe("cancelled");

  ids.retryWaiting = await launch({
    agent: "free",
    prompt: "print 1\nstderr transient\nexit 75",
    retry: { maxAttempts: 2, exitCodes: [75], backoffS: 3600 },
  });
  ids.succeeded = await launch({ agent: "free", prompt: "print 3\nwrite a.txt hi" });
  ids.failed = await launch({ agent: "free", prompt: "stderr boom\nexit 3" });
  ids.timedOut = await launch({ agent: "free", prompt: "print 1\nhang", timeoutS: 1 });
  ids.cancelledRunning = await launch({ agent: "free", prompt: "print 1\nhang" });
  ids.budget = await launch({ agent: "opencode", prompt: "write a.txt x\nsleep 30\nwrite b.txt y", maxTokens: 500 });
  await reach(idOf("cancelledRunning"), (j) => j.status === "running", "running");
  await until(async () => ((await restText(idOf("cancelledRunning"))).includes("line 1") ? true : undefined));
  await api(server, "POST", `/api/jobs/${idOf("cancelledRunning")}/cancel`);

  for (const row of matrix) {
    await reach(idOf(row.key), (j) => j.status === row.status && j.attempt === (row.attempt ?? 1), `${row.status}`, 30_000);
  }
}, 90_000);

describe("every job state, over every door", () => {
  test("REST: the job, its output, tail, attempts and files answer 200 in every state", async () => {
    for (const { key, status: expected } of matrix) {
      const id = idOf(key);
      const job = await api<Job>(server, "GET", `/api/jobs/${id}`);
      expect(job.status, key).toBe(200);
      expect(job.body.status, key).toBe(expected);
      const output = await api<OutputPage>(server, "GET", `/api/jobs/${id}/output?cursor=0`);
      expect(output.status, `${key} output: ${JSON.stringify(output.body)}`).toBe(200);
      expect(output.body.complete, key).toBe(isFinalStatus(expected));
      for (const sub of ["tail", "attempts", "files"]) {
        const res = await api(server, "GET", `/api/jobs/${id}/${sub}`);
        expect(res.status, `${key} ${sub}: ${JSON.stringify(res.body)}`).toBe(200);
      }
    }
    // A queued job (and one cancelled before it started) has no log yet: empty, cursor 0.
    for (const key of ["queued", "cancelledQueued"]) {
      const { body } = await api<OutputPage>(server, "GET", `/api/jobs/${idOf(key)}/output?cursor=0`);
      expect(body.chunks, key).toEqual([]);
      expect(body.cursor, key).toBe(0);
      expect((await api<{ text: string }>(server, "GET", `/api/jobs/${idOf(key)}/tail`)).body.text, key).toBe("");
    }
    // Past the end of an empty log is a cursor error, not a crash.
    const past = await api<{ field: string }>(server, "GET", `/api/jobs/${idOf("queued")}/output?cursor=10`);
    expect(past.status).toBe(400);
    expect(past.body.field).toBe("cursor");
    // Waiting to retry: the first attempt's output is there, and both attempts are listed.
    expect(await restText(idOf("retryWaiting"))).toContain("retrying in 3600 s");
    expect((await api<{ attempts: unknown[] }>(server, "GET", `/api/jobs/${idOf("retryWaiting")}/attempts`)).body.attempts).toHaveLength(1);
  });

  test("WebSocket: subscribe_job gives the status, the whole output and caught_up in every state", async () => {
    for (const { key } of matrix) ws.send({ type: "subscribe_job", jobId: idOf(key), cursor: 0 });
    for (const { key, status: expected } of matrix) {
      const id = idOf(key);
      await ws.waitFor("caught_up", (m) => m.jobId === id);
      expect(ws.of("status", id)[0]?.job.status, key).toBe(expected);
      if (isFinalStatus(expected) || key === "retryWaiting") expect(ws.text(id), key).toBe(await restText(id));
    }
    expect(ws.of("caught_up", idOf("queued"))[0]?.cursor).toBe(0);
    expect(ws.of("error")).toEqual([]);
  });

  test("MCP: _done, corral_logs, corral_wait and corral_jobs answer in every state", async () => {
    for (const { key, agent, done } of matrix) {
      const id = idOf(key);
      const doneText = await tool(`${agent}_done`, { job_id: id });
      expect(doneText.text, key).toMatch(done);
      for (const args of [{ job_id: id }, { job_id: id, cursor: 0 }]) {
        const logs = await tool("corral_logs", args);
        expect(logs.isError, `${key}: ${logs.text}`).toBe(false);
      }
    }
    expect((await tool("corral_logs", { job_id: idOf("queued") })).text).toContain("(no output yet)");
    expect((await tool("corral_logs", { job_id: idOf("queued"), cursor: 0 })).text).toContain("next cursor: 0");
    const all = matrix.map(({ key }) => idOf(key));
    const wait = await tool("corral_wait", { job_ids: all, timeout_s: 1 });
    expect(wait.isError, wait.text).toBe(false);
    expect(wait.text).toMatch(/^3 of 10 still running after 1 s/);
    for (const id of all) expect(wait.text).toContain(id);
    const list = await tool("corral_jobs", { limit: 50 });
    expect(list.isError, list.text).toBe(false);
    for (const id of all) expect(list.text).toContain(id);
  });

  test("a queued job's stream says queued, then streams its run live with no gap and no repeat; _run waiting behind it answers ok", async () => {
    const id = idOf("queued");
    const run = tool("kiro_run", { prompt: "print 2", workdir: workdir() });
    await until(async () =>
      (await api<{ total: number }>(server, "GET", "/api/jobs?status=queued&agent=kiro")).body.total === 2 ? true : undefined,
    );
    await api(server, "POST", `/api/jobs/${idOf("running")}/cancel`);
    await ws.waitForEnd(id);
    expect(ws.of("status", id).map((m) => m.job.status)).toEqual(["queued", "running", "succeeded"]);
    expect(ws.text(id)).toBe(await restText(id));
    expect(ws.text(id)).toBe("line 1\nline 2\nwrote q.txt\ndone kiro-cli-chat\n");
    const cursors = ws.of("output", id).map((m) => m.cursor);
    expect(cursors.length).toBeGreaterThan(0);
    expect([...new Set(cursors)].sort((a, b) => a - b)).toEqual(cursors);
    const answer = await run;
    expect(answer.text, answer.text).toMatch(/^ok\n/);
    expect(answer.text).toContain("line 2");
  });

  test("a job followed across a retry streams every attempt and Corral's notes between them", async () => {
    const marker = path.join(root, "retry-marker");
    const id = await launch({
      agent: "free",
      prompt: `print 2\nfail-once ${marker} 75 transient\nprint 1`,
      retry: { maxAttempts: 2, exitCodes: [75], backoffS: 0.5 },
    });
    ws.send({ type: "subscribe_job", jobId: id, cursor: 0 });
    await ws.waitForEnd(id);
    expect((await status(id)).attempt).toBe(2);
    const text = await restText(id);
    expect(text).toContain("[corral] attempt 1 of 2 failed");
    expect(text).toContain("[corral] attempt 2 of 2");
    expect(ws.text(id)).toBe(text);
  });

  test("the server still answers after all of it", async () => {
    expect((await api(server, "GET", "/api/health")).status).toBe(200);
  });
});

describe("a failing request or message", () => {
  test("answers an error, the connection and the server go on, and an in-process Ollama job is unaffected", async () => {
    // A finished job whose log got damaged: every reader of it fails inside the server.
    const damaged = await launch({ agent: "free", prompt: "print 2" });
    await reach(damaged, (j) => j.status === "succeeded", "succeeded");
    appendFileSync(jobDataPaths(server.dataDir, damaged).log, "this is not a record\n");

    // An Ollama job runs inside the server process meanwhile, turn after turn.
    const turns = 25;
    fake.script("qwen2.5:7b", (_body, turn) =>
      turn < turns ? { toolCalls: [{ name: "write_file", arguments: { path: `t${turn}.txt`, content: "x" } }] } : { content: "all written" },
    );
    const ollama = await launch({ agent: "ollama", prompt: "write the files" });

    const client = await WsClient.open(server);
    cleanups.push(() => client.close());
    let rounds = 0;
    do {
      rounds++;
      client.send({ type: "subscribe_job", jobId: damaged, cursor: 0 });
      const output = await api<{ error: string }>(server, "GET", `/api/jobs/${damaged}/output`);
      expect(output.status).toBe(500);
      expect((await api(server, "GET", `/api/jobs/${damaged}/tail`)).status).toBe(500);
      const logs = await tool("corral_logs", { job_id: damaged });
      expect(logs.isError).toBe(true);
      expect(logs.text).toMatch(/^error: .*output log .* is damaged near byte/);
      const done = await tool("free_done", { job_id: damaged });
      expect(done.text).toMatch(/^listo\n/);
    } while (!isFinalStatus((await status(ollama)).status));
    await until(() => (client.of("error", damaged).length >= rounds ? true : undefined));
    expect(client.of("error", damaged)[0]?.message).toMatch(
      // Found when the subscription checks its cursor, or by the catch-up that follows: either way an answer.
      /^the server could not handle (subscribe_job|the stream of job \w+ \(it stopped; subscribe again to resume\)): the output log .* is damaged near byte \d+/,
    );

    const ended = await status(ollama);
    expect(ended.status, ended.error ?? "").toBe("succeeded");
    expect(ended.finalText).toBe("all written");
    // The same connection still serves.
    client.send({ type: "subscribe_job", jobId: idOf("succeeded"), cursor: 0 });
    await client.waitFor("caught_up", (m) => m.jobId === idOf("succeeded"));
    expect((await api(server, "GET", "/api/health")).status).toBe(200);
  }, 60_000);
});
