// opencode_server agents against a fake `opencode serve` speaking OpenCode 1.18.33's HTTP API and
// event stream (fixtures/fake-opencode.ts): jobs answered in a session of the server, follow-ups in
// the same session, a busy session answering in its running turn, cancel and timeout aborting the
// session's loop, and every way the server can refuse or go away ending the job with why.
import { mkdirSync } from "node:fs";
import path from "node:path";
import { isFinalStatus, type Job, type ReadablePage } from "@corral/shared";
import { afterEach, describe, expect, it } from "vitest";
import { createOpencodeServerAdapter } from "../src/agents/opencode-server/adapter.js";
import type { JobSpec, UsageReport, WorkerIO } from "../src/agents/types.js";
import { type FakeOpencode, startFakeOpencode } from "./fixtures/fake-opencode.js";
import { api, startServer, type TestServer, until } from "./helpers.js";

const PASSWORD = "fake-secret";
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Setup {
  server: TestServer;
  fake: FakeOpencode;
  workdir: string;
}

async function setup(agent: Record<string, unknown> = {}, serverEnv: Record<string, string> = {}): Promise<Setup> {
  const fake = await startFakeOpencode({ password: PASSWORD });
  cleanups.push(() => fake.close());
  const server = await startServer(serverEnv);
  cleanups.push(() => server.close());
  const workdir = path.join(server.root, "project");
  mkdirSync(workdir, { recursive: true });
  const created = await api(server, "POST", "/api/agents", {
    name: "live",
    kind: "opencode_server",
    baseUrl: fake.url,
    workdir,
    env: { OPENCODE_SERVER_PASSWORD: PASSWORD },
    ...agent,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { server, fake, workdir };
}

async function launch(server: TestServer, body: Record<string, unknown>): Promise<string> {
  const res = await api<Job>(server, "POST", "/api/jobs", { agent: "live", ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

async function ended(server: TestServer, id: string): Promise<Job> {
  return until(
    async () => {
      const res = await api<Job>(server, "GET", `/api/jobs/${id}`);
      return isFinalStatus(res.body.status) ? res.body : undefined;
    },
    15_000,
    `job ${id} to end`,
  );
}

/** A job run by the adapter itself, as the job driver drives it (follow-ups: `JobSpec.followUp`). */
async function runAdapter({ server }: Setup, spec: Omit<JobSpec, "agent">) {
  const io: WorkerIO & { out: string[]; reports: UsageReport[] } = {
    out: [],
    reports: [],
    write(_stream, text) {
      this.out.push(text);
    },
    usage(report) {
      this.reports.push(report);
    },
    signal: new AbortController().signal,
  };
  return createOpencodeServerAdapter(server.services.config).run({ ...spec, agent: await server.services.agents.row("live") }, io);
}

// The tool step itself, not only the prompt: released before it is held, it would be held for good (a loaded machine did that).
const heldTool = (fake: FakeOpencode) => until(() => (fake.holding() ? true : undefined));

describe("opencode_server agents", () => {
  it("answer a job in a new session of the server working in the job's workdir, with readable events, usage, cost and model", async () => {
    const { server, fake, workdir } = await setup();
    const id = await launch(server, { prompt: "Hello there", model: "fake/fake-model" });
    const job = await ended(server, id);
    expect(job.status, job.error ?? "").toBe("succeeded");
    expect(job.finalText).toBe("heard: Hello there");
    expect(job.usage).toMatchObject({ model: "fake/fake-model", inputTokens: 700, outputTokens: 20, cachedInputTokens: 100, costSource: "reported" });
    expect(job.usage.costUsd).toBeCloseTo(0.0021, 10);

    const created = fake.requests.find((r) => r.method === "POST" && r.path.startsWith("/session?"));
    expect(new URL(created?.path ?? "", "http://x").searchParams.get("directory")).toBe(workdir);
    expect(created?.body).toEqual({ title: `Corral job ${id}` });
    const prompt = fake.requests.find((r) => r.path.includes("/prompt_async"));
    expect(prompt?.headers.authorization).toBe(`Basic ${Buffer.from(`opencode:${PASSWORD}`).toString("base64")}`);
    expect(prompt?.body).toMatchObject({
      messageID: expect.stringMatching(/^msg_[0-9a-f]{12}[0-9A-Za-z]{14}$/),
      parts: [{ type: "text", text: "Hello there" }],
    });
    expect(prompt?.body).toMatchObject({ model: { providerID: "fake", modelID: "fake-model" } });

    const readable = await api<ReadablePage>(server, "GET", `/api/jobs/${id}/readable`);
    expect(readable.body.events).toContainEqual({ type: "text", text: "heard: Hello there" });
    expect(readable.body.events).toContainEqual(expect.objectContaining({ type: "usage", scope: "step" }));
  });

  it("show tool steps as they finish and sum every step's usage", async () => {
    const { server, fake } = await setup();
    const id = await launch(server, { prompt: "use a tool please" });
    await heldTool(fake);
    fake.finishTools();
    const job = await ended(server, id);
    expect(job.status, job.error ?? "").toBe("succeeded");
    expect(job.usage).toMatchObject({ inputTokens: 1700, outputTokens: 70, cachedInputTokens: 100 });
    expect(job.usage.costUsd).toBeCloseTo(0.0045 + 0.0021, 10);
    const readable = await api<ReadablePage>(server, "GET", `/api/jobs/${id}/readable`);
    expect(readable.body.events).toContainEqual({ type: "tool_call", name: "bash", args: "make test" });
    expect(readable.body.events).toContainEqual({ type: "tool_result", ok: true, detail: "ok" });
  });

  it("post a follow-up into the earlier job's session, so OpenCode answers with the first turn in view", async () => {
    const s = await setup();
    const first = await runAdapter(s, { jobId: "j1", prompt: "remember heron", workdir: s.workdir, model: null });
    expect(first.sessionId).toMatch(/^ses_/);
    const second = await runAdapter(s, {
      jobId: "j2",
      prompt: "what word?",
      workdir: s.workdir,
      model: null,
      followUp: { jobId: "j1", workerSession: first.sessionId ?? null },
    });
    expect(second.sessionId).toBe(first.sessionId);
    expect(second.finalText).toBe("heard: remember heron | what word?");
    expect(s.fake.sessions.size).toBe(1);
  });

  it("through the server: a REST follow-up and a conversation's corral_send continue the earlier job's OpenCode session", async () => {
    const s = await setup();
    const first = await ended(s.server, await launch(s.server, { prompt: "remember heron" }));
    expect(first.workerSession).toMatch(/^ses_/);
    const second = await ended(s.server, await launch(s.server, { prompt: "what word?", session: first.id }));
    expect(second.status, second.error ?? "").toBe("succeeded");
    expect(second.followUpOf).toBe(first.id);
    expect(second.workerSession).toBe(first.workerSession);
    expect(second.finalText).toBe("heard: remember heron | what word?");
    expect(s.fake.sessions.size).toBe(1);
  });

  it("refuse a follow-up whose earlier job has no session, and one whose session OpenCode does not have", async () => {
    const s = await setup();
    const spec = { jobId: "j2", prompt: "again", workdir: s.workdir, model: null };
    await expect(runAdapter(s, { ...spec, followUp: { jobId: "j1", workerSession: null } })).rejects.toThrow(
      "job j1 cannot be continued: its opencode_server worker reported no session id",
    );
    // Not OpenCode's shape (a runner's login may have stored it): refused before any request.
    for (const id of ["..", "ses_gone", "../../config", "--help"]) {
      await expect(runAdapter(s, { ...spec, followUp: { jobId: "j1", workerSession: id } })).rejects.toThrow("is not a opencode_server session id");
    }
    const gone = "ses_0123456789abAbCdEfGhIjKlMn";
    await expect(runAdapter(s, { ...spec, followUp: { jobId: "j1", workerSession: gone } })).rejects.toThrow(
      `OpenCode at ${s.fake.url} answered 404 to GET /session/${gone}: Session not found: ${gone}`,
    );
    expect(s.fake.requests.some((r) => r.path.includes("/prompt_async"))).toBe(false);
  });

  it("deliver into a busy session's running turn: the second message is answered by the same loop", async () => {
    const s = await setup();
    const first = runAdapter(s, { jobId: "j1", prompt: "start a tool", workdir: s.workdir, model: null });
    await heldTool(s.fake);
    const [session] = [...s.fake.sessions.values()];
    if (!session) throw new Error("no session");
    expect(session.running).not.toBeNull();
    const second = runAdapter(s, {
      jobId: "j2",
      prompt: "and say hi",
      workdir: s.workdir,
      model: null,
      followUp: { jobId: "j1", workerSession: session.id },
    });
    await until(() => (s.fake.requests.filter((r) => r.path.includes("/prompt_async")).length === 2 ? true : undefined));
    s.fake.finishTools();
    const [a, b] = await Promise.all([first, second]);
    expect(b.finalText).toBe("heard: start a tool | and say hi");
    // The first job's own reply is its tool step; the answer after it replied to the newer message.
    expect(a.finalText).toBeUndefined();
    expect(a.usage).toMatchObject({ inputTokens: 1000, outputTokens: 50 });
    expect(b.usage).toMatchObject({ inputTokens: 700, outputTokens: 20 });
  });

  it("join the session named by OPENCODE_SESSION_ID instead of starting one", async () => {
    const s = await setup();
    const res = await fetch(`${s.fake.url}/session`, {
      method: "POST",
      headers: { authorization: `Basic ${Buffer.from(`opencode:${PASSWORD}`).toString("base64")}`, "content-type": "application/json" },
      body: JSON.stringify({ title: "mine" }),
    });
    const mine = (await res.json()) as { id: string };
    await api(s.server, "PATCH", "/api/agents/live", { env: { OPENCODE_SERVER_PASSWORD: PASSWORD, OPENCODE_SESSION_ID: mine.id } });
    const job = await ended(s.server, await launch(s.server, { prompt: "into your session" }));
    expect(job.status, job.error ?? "").toBe("succeeded");
    expect(s.fake.sessions.size).toBe(1);
    expect(s.fake.sessions.get(mine.id)?.messages.length).toBe(2);
  });

  it("cancel and timeout abort the session's loop in OpenCode", async () => {
    const { server, fake } = await setup();
    const id = await launch(server, { prompt: "a long tool" });
    await heldTool(fake);
    expect((await api(server, "POST", `/api/jobs/${id}/cancel`)).status).toBe(200);
    expect((await ended(server, id)).status).toBe("cancelled");
    const [session] = [...fake.sessions.values()];
    expect(fake.requests.some((r) => r.method === "POST" && r.path.startsWith(`/session/${session?.id}/abort`))).toBe(true);
    await until(() => (session?.running === null ? true : undefined));
    expect(session?.messages.at(-1)?.info.error).toMatchObject({ name: "MessageAbortedError" });

    const timed = await launch(server, { prompt: "another long tool", timeoutS: 1 });
    const job = await ended(server, timed);
    expect(job.status).toBe("timed_out");
    expect(fake.requests.filter((r) => r.path.includes("/abort"))).toHaveLength(2);
  });

  it("fail a job with OpenCode's own error (in a reply, or prompt_async failing the message), and when its event stream ends mid-turn", async () => {
    const { server, fake } = await setup();
    const failed = await ended(server, await launch(server, { prompt: "please fail" }));
    expect(failed.status).toBe("failed");
    expect(failed.error).toBe("Provider said no");
    const readable = await api<ReadablePage>(server, "GET", `/api/jobs/${failed.id}/readable`);
    expect(readable.body.events).toContainEqual(expect.objectContaining({ type: "error", message: "Provider said no" }));

    const unknown = await ended(server, await launch(server, { prompt: "hi", model: "nope/zz" }));
    expect(unknown.status).toBe("failed");
    expect(unknown.error).toBe("Model not found: nope/zz");

    const dropped = await launch(server, { prompt: "a tool, then the server goes away" });
    await until(() => (fake.requests.filter((r) => r.path.includes("/prompt_async")).length === 3 ? true : undefined));
    fake.dropStreams();
    const job = await ended(server, dropped);
    expect(job.status).toBe("failed");
    expect(job.error).toBe("the connection to OpenCode's event stream broke before the turn ended (terminated)");
  });

  it("refuse a model that is not provider/model before posting anything", async () => {
    const { server, fake } = await setup();
    const job = await ended(server, await launch(server, { prompt: "hi", model: "just-a-model" }));
    expect(job.status).toBe("failed");
    expect(job.error).toContain("model just-a-model is not OpenCode's provider/model form");
    expect(fake.requests.filter((r) => r.method === "POST")).toHaveLength(0);
  });

  it("report availability: the version when it answers, else what to do", async () => {
    const { server, fake } = await setup();
    type WithAvailability = { availability: { available: boolean; hint: string | null; version: string | null; resolved: string | null } };
    const ok = await api<WithAvailability>(server, "GET", "/api/agents/live");
    expect(ok.body.availability).toEqual({ available: true, version: "1.18.33", resolved: `${fake.url} (OpenCode 1.18.33)`, hint: null });

    await api(server, "PATCH", "/api/agents/live", { env: {} });
    const locked = await api<WithAvailability>(server, "GET", "/api/agents/live");
    expect(locked.body.availability.available).toBe(false);
    expect(locked.body.availability.hint).toContain("asks for its password: set OPENCODE_SERVER_PASSWORD");

    await api(server, "PATCH", "/api/agents/live", { env: { OPENCODE_SERVER_PASSWORD: PASSWORD, OPENCODE_SESSION_ID: "ses_missing" } });
    const missing = await api<WithAvailability>(server, "GET", "/api/agents/live");
    expect(missing.body.availability.hint).toContain("Session not found: ses_missing");

    await api(server, "PATCH", "/api/agents/live", { baseUrl: null, env: { OPENCODE_SERVER_PASSWORD: PASSWORD } });
    const unset = await api<WithAvailability>(server, "GET", "/api/agents/live");
    expect(unset.body.availability.hint).toContain("agent live has no baseUrl; start it with `opencode serve --port <port>`");

    await fake.close();
    await api(server, "PATCH", "/api/agents/live", { baseUrl: fake.url });
    const down = await api<WithAvailability>(server, "GET", "/api/agents/live");
    expect(down.body.availability.hint).toMatch(new RegExp(`^OpenCode is not reachable at ${fake.url} \\(ECONNREFUSED\\); start it with`));
    const job = await ended(server, await launch(server, { prompt: "hi" }));
    expect(job.status).toBe("failed");
    expect(job.error).toContain(`OpenCode is not reachable at ${fake.url}`);
  });
});
