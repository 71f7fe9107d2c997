// The real OpenCode 1.18.33 server (`opencode serve`, with a password) as an `opencode_server`
// agent, its model the fake OpenAI API: a job is answered in a session of that server, a
// follow-up in the same session carries the first turn to the model, a message posted while the
// session is busy is answered in that same turn, and cancel aborts the session's loop.
import type { ChildProcess } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { isFinalStatus, type Job, type ReadablePage } from "@corral/shared";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpencodeServerAdapter } from "../src/agents/opencode-server/adapter.js";
import type { JobSpec, UsageReport, WorkerIO, WorkerResult } from "../src/agents/types.js";
import { startFakeOpenAI } from "../test/fixtures/fake-llm/openai.js";
import type { FakeServer, RecordedRequest, Script } from "../test/fixtures/fake-llm/script.js";
import { api, startServer, type TestServer, until } from "../test/helpers.js";
import { FAKE_OPENCODE_MODEL, opencodeConfig, runJob } from "./lib/jobs.js";
import { serveOpencode } from "./lib/opencode-serve.js";

const PASSWORD = "compat-secret-1";

/** A chat request's messages as [role, text] pairs. */
function dialogue(request: RecordedRequest): [string, string][] {
  const messages = (request.body as { messages?: { role: string; content: unknown }[] }).messages ?? [];
  return messages.map((m) => [m.role, typeof m.content === "string" ? m.content : JSON.stringify(m.content)]);
}

const chats = (fake: FakeServer) => fake.requests.filter((r) => r.path === "/v1/chat/completions" && (r.body as { tools?: unknown[] }).tools?.length);

/** A job run by the adapter itself, as the job driver drives it, with what it wrote. */
async function runAdapter(server: TestServer, spec: Omit<JobSpec, "agent">, signal?: AbortSignal) {
  const agent = await server.services.agents.row("live");
  const out: string[] = [];
  const usage: UsageReport[] = [];
  const io: WorkerIO = { write: (_stream, text) => out.push(text), usage: (u) => usage.push(u), signal: signal ?? new AbortController().signal };
  const adapter = createOpencodeServerAdapter(server.services.config);
  const result: WorkerResult = await adapter.run({ ...spec, agent }, io);
  return { result, out: out.join(""), usage };
}

describe("a running OpenCode 1.18.33 server as an opencode_server agent", () => {
  let server: TestServer;
  let fake: FakeServer;
  let opencode: ChildProcess | undefined;
  let workdir: string;

  beforeAll(async () => {
    // Each script turn is picked by how many tool results the request carries: the first model
    // step runs a slow shell command, so a second message can arrive while the loop is busy.
    const script: Script = [
      { kind: "tool", name: "bash", args: { command: "sleep 4; echo slept", description: "Wait" }, usage: { input: 1000, output: 30 } },
      { kind: "text", text: "Answered from the live session.", usage: { input: 1200, output: 9, cacheRead: 200 } },
    ];
    fake = await startFakeOpenAI(script);
    server = await startServer();
    workdir = path.join(server.root, "project");
    mkdirSync(workdir, { recursive: true });
    const home = path.join(server.root, "opencode-home");
    mkdirSync(home, { recursive: true });
    const served = await serveOpencode(home, workdir, { ...opencodeConfig(server.root, fake.url), OPENCODE_SERVER_PASSWORD: PASSWORD });
    opencode = served.child;
    const created = await api(server, "POST", "/api/agents", {
      name: "live",
      kind: "opencode_server",
      baseUrl: served.url,
      workdir,
      env: { OPENCODE_SERVER_PASSWORD: PASSWORD },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  }, 90_000);

  afterAll(async () => {
    if (opencode?.pid) process.kill(-opencode.pid, "SIGKILL");
    await server?.close();
    await fake?.close();
  });

  it("is available when its server answers with the password, and names the version", async () => {
    const res = await api<{ availability: { available: boolean; version: string | null; resolved: string | null } }>(
      server,
      "GET",
      "/api/agents/live",
    );
    expect(res.body.availability).toMatchObject({ available: true, version: "1.18.33" });
  });

  it("answers a job in a session of the server: the answer, its readable events, usage, cost and model from OpenCode", async () => {
    const { job, output } = await runJob(server, "live", { prompt: "What is in this project?", model: FAKE_OPENCODE_MODEL });
    expect(job.status, `${job.error ?? ""}\n${output}`).toBe("succeeded");
    expect(job.finalText).toBe("Answered from the live session.");
    expect(output).toMatch(/\[opencode\] session ses_\w+ on http:\/\/127\.0\.0\.1:\d+/);
    // OpenCode prices each step from its config: 1000×$3 + 30×$15, then 1000×$3 + 200×$0.30 + 9×$15, per million.
    expect(job.usage).toMatchObject({
      model: FAKE_OPENCODE_MODEL,
      inputTokens: 2200,
      outputTokens: 39,
      cachedInputTokens: 200,
      costSource: "reported",
    });
    expect(job.usage.costUsd).toBeCloseTo((1000 * 3 + 30 * 15 + 1000 * 3 + 200 * 0.3 + 9 * 15) / 1e6, 10);
    const readable = await api<ReadablePage>(server, "GET", `/api/jobs/${job.id}/readable`);
    const kinds = readable.body.events.map((e) => e.type);
    expect(kinds).toEqual(expect.arrayContaining(["tool_call", "tool_result", "usage", "text"]));
    expect(readable.body.events).toContainEqual(expect.objectContaining({ type: "tool_call", name: "bash", args: "sleep 4; echo slept" }));
  }, 120_000);

  it("posts a follow-up into the same session, so the model's second request carries the first turn", async () => {
    const first = await runAdapter(server, { jobId: "turn1", prompt: "Remember the word heron.", workdir, model: FAKE_OPENCODE_MODEL });
    expect(first.result.sessionId).toMatch(/^ses_/);
    const before = chats(fake).length;
    const second = await runAdapter(server, {
      jobId: "turn2",
      prompt: "Which word did I ask you to remember?",
      workdir,
      model: FAKE_OPENCODE_MODEL,
      followUp: { jobId: "turn1", workerSession: first.result.sessionId ?? null },
    });
    expect(second.result.sessionId).toBe(first.result.sessionId);
    expect(second.result.finalText).toBe("Answered from the live session.");
    const asked = chats(fake).slice(before).map(dialogue);
    expect(asked.length).toBeGreaterThan(0);
    for (const messages of asked) {
      const users = messages.filter(([role]) => role === "user").map(([, text]) => text);
      expect(users[0]).toContain("Remember the word heron.");
      expect(users.at(-1)).toContain("Which word did I ask you to remember?");
      expect(messages.some(([role, text]) => role === "assistant" && text.includes("Answered from the live session."))).toBe(true);
    }
  }, 120_000);

  it("answers a message posted while the session is busy in that same turn", async () => {
    const first = runAdapter(server, { jobId: "busy1", prompt: "Start a long task.", workdir, model: FAKE_OPENCODE_MODEL });
    // Wait until the first turn's shell command is running, then post into the same session.
    const before = chats(fake).length;
    await until(async () => (chats(fake).length > before ? true : undefined), 60_000, "the first model request");
    const firstResult = first.then((r) => r.result);
    const sessionId = await until(
      async () => {
        const sessions = await fetch(`${(await server.services.agents.row("live")).baseUrl}/session`, {
          headers: { authorization: `Basic ${Buffer.from(`opencode:${PASSWORD}`).toString("base64")}` },
        }).then((r) => r.json() as Promise<{ id: string; title: string }[]>);
        return sessions.find((s) => s.title === "Corral job busy1")?.id;
      },
      30_000,
      "the first job's session",
    );
    const joined = await runAdapter(server, {
      jobId: "busy2",
      prompt: "Also say hello.",
      workdir,
      model: FAKE_OPENCODE_MODEL,
      followUp: { jobId: "busy1", workerSession: sessionId },
    });
    expect((await firstResult).sessionId).toBe(sessionId);
    expect(joined.result.finalText).toBe("Answered from the live session.");
    // One loop: the request after the tool result already carries the second message.
    const asked = chats(fake).slice(before).map(dialogue);
    const afterTool = asked.find((messages) => messages.some(([role]) => role === "tool"));
    expect(afterTool?.filter(([role]) => role === "user").map(([, text]) => text)).toEqual(["Start a long task.", "Also say hello."]);
  }, 120_000);

  it("fails a job for a model the server does not have with OpenCode's own words", async () => {
    const { job } = await runJob(server, "live", { prompt: "Hello?", model: "nope/zz" });
    expect(job.status).toBe("failed");
    expect(job.error).toMatch(/^Model not found: nope\/zz/);
  }, 60_000);

  it("cancel aborts the session's loop in OpenCode: the job ends cancelled and OpenCode's reply ends aborted", async () => {
    const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "live", prompt: "Run the long task.", model: FAKE_OPENCODE_MODEL });
    expect(launched.status).toBe(201);
    const before = chats(fake).length;
    await until(async () => (chats(fake).length > before ? true : undefined), 60_000, "the model request");
    const cancelled = await api(server, "POST", `/api/jobs/${launched.body.id}/cancel`);
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    const job = await until(
      async () => {
        const res = await api<Job>(server, "GET", `/api/jobs/${launched.body.id}`);
        return isFinalStatus(res.body.status) ? res.body : undefined;
      },
      30_000,
      "the job to end",
    );
    expect(job.status).toBe("cancelled");
    // The session's turn ended aborted in OpenCode (not merely left running): its reply carries OpenCode's abort error.
    const out = await api<{ chunks: { text: string }[] }>(server, "GET", `/api/jobs/${job.id}/output`);
    const sessionId = /session (ses_\w+)/.exec(out.body.chunks.map((c) => c.text).join(""))?.[1];
    const baseUrl = (await server.services.agents.row("live")).baseUrl;
    const auth = { authorization: `Basic ${Buffer.from(`opencode:${PASSWORD}`).toString("base64")}` };
    const reply = await until(
      async () => {
        const messages = (await fetch(`${baseUrl}/session/${sessionId}/message`, { headers: auth }).then((r) => r.json())) as {
          info: { role: string; time: { completed?: number }; error?: { name: string } };
        }[];
        const last = messages.filter((m) => m.info.role === "assistant").at(-1)?.info;
        return last?.time.completed ? last : undefined;
      },
      15_000,
      "the session's reply to end",
    );
    expect(reply.error?.name).toBe("MessageAbortedError");
  }, 120_000);
});
