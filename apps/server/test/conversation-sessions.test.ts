// Corral's agents in the hub's sessions: an agent limited to sessions (`sessions`) is listed and
// reachable in those only, and a worker's conversation is kept per hub session. Through the
// official MCP SDK client and REST, with the fake CLIs (their `recall` prints a session's earlier
// turns) and a fake `opencode serve` for an agent pinned to one OpenCode session.
import path from "node:path";
import { mkdirSync } from "node:fs";
import type { ApiError, HubAgentList, HubRegistration, Job } from "@corral/shared";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { type FakeOpencode, startFakeOpencode } from "./fixtures/fake-opencode.js";
import { api, startServer, type TestServer } from "./helpers.js";
import { connectMcp, textOf } from "./mcp-client.js";

const HUB = "/mcp?toolsets=hub";
const call = async (client: Client, name: string, args: Record<string, unknown> = {}) => textOf(await client.callTool({ name, arguments: args }));

async function register(client: Client, args: Record<string, unknown>): Promise<string> {
  const text = await call(client, "corral_register", args);
  const handle = /^handle: ([A-Za-z0-9_-]+)$/m.exec(text)?.[1];
  if (!handle) throw new Error(`no handle in: ${text}`);
  return handle;
}

/** Sends to a worker and waits for its answer: the job's id and the answer's text. */
async function ask(client: Client, handle: string, to: string, text: string): Promise<{ jobId: string; answer: string }> {
  const sent = await call(client, "corral_send", { handle, to, text });
  const jobId = /job (\w+) is answering/.exec(sent)?.[1];
  if (!jobId) throw new Error(`no job in: ${sent}`);
  return { jobId, answer: await call(client, "corral_receive", { handle, timeout_s: 30 }) };
}

const workersOf = async (server: TestServer, session: string) =>
  (await api<HubAgentList>(server, "GET", `/api/conversations/${session}/agents`)).body.agents.filter((a) => a.kind === "worker").map((a) => a.name);

describe("an agent limited to sessions", () => {
  let server: TestServer;
  const clients: Client[] = [];
  const open = async () => {
    const client = await connectMcp(server, HUB);
    clients.push(client);
    return client;
  };
  beforeAll(async () => {
    server = await startServer();
    const created = await api(server, "POST", "/api/agents", { name: "reviewer", kind: "gemini", sessions: ["review"], description: "reviews" });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  afterAll(() => server.close());

  test("is listed and answers in its session; from another it is a name nobody has, on MCP and REST alike", async () => {
    const alice = await open();
    const eve = await open();
    const a = await register(alice, { name: "alice", session: "review" });
    const e = await register(eve, { name: "eve", session: "other" });

    expect(await call(alice, "corral_agents", { session: "review" })).toContain("reviewer (Corral worker)");
    const elsewhere = await call(eve, "corral_agents", { session: "other" });
    expect(elsewhere).not.toContain("reviewer");
    // Agents without sessions are in every session, as before.
    expect(elsewhere).toContain("gemini (Corral worker)");
    expect(await workersOf(server, "review")).toContain("reviewer");
    expect(await workersOf(server, "other")).not.toContain("reviewer");

    // The answer for the limited agent is word for word the answer for a name nobody has.
    const unknown = await call(eve, "corral_send", { handle: e, to: "nobody", text: "hi" });
    expect(unknown).toBe("error: to: no agent named nobody in session other; list them with corral_agents");
    expect(await call(eve, "corral_send", { handle: e, to: "reviewer", text: "hi" })).toBe(unknown.replace("nobody", "reviewer"));
    expect(await call(eve, "corral_read", { handle: e, agent: "reviewer" })).toBe(
      (await call(eve, "corral_read", { handle: e, agent: "nobody" })).replace("nobody", "reviewer"),
    );

    // REST: a registration of the other session sends as eve does, and reads the same.
    const reg = await api<HubRegistration>(server, "POST", "/api/conversations/other/agents", { name: "script" });
    const key = reg.body.key;
    const viaRest = await api<ApiError>(server, "POST", "/api/conversations/other/messages", { key, to: "reviewer", text: "hi" });
    const nobody = await api<ApiError>(server, "POST", "/api/conversations/other/messages", { key, to: "nobody", text: "hi" });
    expect(viaRest.status).toBe(404);
    expect({ ...viaRest.body, error: viaRest.body.error.replace("reviewer", "X") }).toEqual({
      ...nobody.body,
      error: nobody.body.error.replace("nobody", "X"),
    });
    const read = await api<ApiError>(server, "GET", "/api/conversations/other/messages?agent=reviewer");
    expect(read.status).toBe(404);
    expect(read.body.error).toBe("no agent named reviewer in session other");

    // In its session it answers as a worker does.
    const { jobId, answer } = await ask(alice, a, "reviewer", "look at parser.ts");
    expect(answer).toContain(`from reviewer to alice · job ${jobId}`);
    expect(answer).toContain("done gemini");
  });

  test("its name is free for a client of another session, and taken in its own", async () => {
    const mallory = await open();
    expect(await call(mallory, "corral_register", { name: "reviewer", session: "review" })).toMatch(
      /^error: name: reviewer is one of Corral's agents/,
    );
    const m = await register(mallory, { name: "reviewer", session: "elsewhere" });
    // There the client is the only reviewer: messages to it wait in its inbox, no job runs.
    const other = await open();
    const o = await register(other, { name: "other", session: "elsewhere" });
    expect(await call(other, "corral_send", { handle: o, to: "reviewer", text: "for the client" })).toMatch(/^sent #\d+ to reviewer$/);
    expect(await call(mallory, "corral_receive", { handle: m, timeout_s: 0 })).toContain("for the client");
    expect((await api<HubAgentList>(server, "GET", "/api/conversations/elsewhere/agents")).body.agents.filter((a) => a.name === "reviewer")).toEqual([
      expect.objectContaining({ kind: "client" }),
    ]);
  });

  test("its MCP tools are not the hub's: every MCP client still runs it", async () => {
    const client = await open();
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["reviewer_run", "reviewer_run_async", "reviewer_done"]));
    const ran = await call(client, "reviewer_run", { prompt: "outside any session", timeout_s: 60 });
    expect(ran).toMatch(/^ok/);
  });

  test("limited again, it leaves the session it was in, and joins the one named", async () => {
    expect((await api(server, "PATCH", "/api/agents/reviewer", { sessions: ["later"] })).status).toBe(200);
    expect(await workersOf(server, "review")).not.toContain("reviewer");
    expect(await workersOf(server, "later")).toContain("reviewer");
    expect((await api(server, "PATCH", "/api/agents/reviewer", { sessions: [] })).status).toBe(200);
    expect(await workersOf(server, "review")).toContain("reviewer");
    expect(await workersOf(server, "anything")).toContain("reviewer");
    expect((await api(server, "PATCH", "/api/agents/reviewer", { sessions: ["review"] })).status).toBe(200);
  });
});

describe("a worker's conversation is the hub session's", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  test("the same name in two sessions talking to one worker: each continues its own conversation", async () => {
    const one = await connectMcp(server, HUB);
    const two = await connectMcp(server, HUB);
    try {
      const h1 = await register(one, { name: "lead", session: "s1" });
      const h2 = await register(two, { name: "lead", session: "s2" });
      // Interleaved: each session's second message comes after the other's first.
      const first1 = await ask(one, h1, "gemini", "apples for s1");
      const first2 = await ask(two, h2, "gemini", "pears for s2");
      const recall1 = await ask(one, h1, "gemini", "recall");
      const recall2 = await ask(two, h2, "gemini", "recall");
      expect(recall1.answer).toContain("turn 1: apples for s1");
      expect(recall1.answer).not.toContain("pears");
      expect(recall2.answer).toContain("turn 1: pears for s2");
      expect(recall2.answer).not.toContain("apples");
      const job = async (id: string) => (await api<Job>(server, "GET", `/api/jobs/${id}`)).body;
      expect(await job(recall1.jobId)).toMatchObject({ followUpOf: first1.jobId, conversationId: first1.jobId });
      expect(await job(recall2.jobId)).toMatchObject({ followUpOf: first2.jobId, conversationId: first2.jobId });
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });
});

describe("OpenCode server agents in two hub sessions", () => {
  let server: TestServer;
  let fake: FakeOpencode;
  let workdir: string;
  const PASSWORD = "fake-secret";
  const env = { OPENCODE_SERVER_PASSWORD: PASSWORD };
  const clients: Client[] = [];
  const open = async () => {
    const client = await connectMcp(server, HUB);
    clients.push(client);
    return client;
  };
  beforeAll(async () => {
    fake = await startFakeOpencode({ password: PASSWORD });
    server = await startServer();
    workdir = path.join(server.root, "project");
    mkdirSync(workdir, { recursive: true });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    await server.close();
    await fake.close();
  });

  const openSession = async (title: string) => {
    const res = await fetch(`${fake.url}/session`, {
      method: "POST",
      headers: { authorization: `Basic ${Buffer.from(`opencode:${PASSWORD}`).toString("base64")}`, "content-type": "application/json" },
      body: JSON.stringify({ title }),
    });
    return ((await res.json()) as { id: string }).id;
  };

  test("one that starts its own sessions gives each hub session an OpenCode session of its own, continued there", async () => {
    const created = await api(server, "POST", "/api/agents", { name: "live", kind: "opencode_server", baseUrl: fake.url, workdir, env });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const one = await open();
    const two = await open();
    const h1 = await register(one, { name: "lead", session: "s1" });
    const h2 = await register(two, { name: "lead", session: "s2" });
    const before = fake.sessions.size;
    await ask(one, h1, "live", "first in s1");
    await ask(two, h2, "live", "first in s2");
    await ask(one, h1, "live", "second in s1");
    expect(fake.sessions.size).toBe(before + 2);
    const texts = (id: string) =>
      JSON.stringify(
        fake.sessions
          .get(id)
          ?.messages.filter((m) => m.info.role === "user")
          .map((m) => m.text) ?? [],
      );
    const mine = [...fake.sessions.keys()].slice(before);
    const [s1, s2] = mine.map(texts);
    expect(s1).toContain("first in s1");
    expect(s1).toContain("second in s1");
    expect(s1).not.toContain("in s2");
    expect(s2).toContain("first in s2");
    expect(s2).not.toContain("in s1");
  });

  test("one pinned to an OpenCode session answers in the one hub session it is limited to, and is refused more than one", async () => {
    const pinned = await openSession("mine");
    const pinnedEnv = { ...env, OPENCODE_SESSION_ID: pinned };
    const two = await api<ApiError>(server, "POST", "/api/agents", {
      name: "window",
      kind: "opencode_server",
      baseUrl: fake.url,
      workdir,
      env: pinnedEnv,
      sessions: ["p1", "p2"],
    });
    expect(two.status).toBe(400);
    expect(two.body.field).toBe("sessions");
    expect(two.body.error).toMatch(
      /joins one OpenCode session \(OPENCODE_SESSION_ID in its env\), so it answers in one hub session at most: .*name one session, or unpin it/,
    );

    // Unlimited: listed offline, and a message is refused with the way out, the same in every session.
    const created = await api(server, "POST", "/api/agents", { name: "window", kind: "opencode_server", baseUrl: fake.url, workdir, env: pinnedEnv });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const one = await open();
    const h1 = await register(one, { name: "owner", session: "p1" });
    const listed = (await api<HubAgentList>(server, "GET", "/api/conversations/p1/agents")).body.agents.find((a) => a.name === "window");
    expect(listed).toMatchObject({ kind: "worker", online: false });
    expect(await call(one, "corral_send", { handle: h1, to: "window", text: "hello" })).toMatch(
      /^error: to: window joins one OpenCode session .*limit it to this one \(sessions: \[p1\], in the panel's agent form, PATCH \/api\/agents\/window or the config file\)/,
    );
    expect(fake.sessions.get(pinned)?.messages ?? []).toHaveLength(0);

    // Limited to p1: it answers there, in the pinned session, and p2 does not know it.
    expect((await api(server, "PATCH", "/api/agents/window", { sessions: ["p1"] })).status).toBe(200);
    expect((await api<HubAgentList>(server, "GET", "/api/conversations/p1/agents")).body.agents.find((a) => a.name === "window")).toMatchObject({
      online: true,
    });
    const { answer } = await ask(one, h1, "window", "into your window");
    expect(answer).toMatch(/from window to owner · job \w+/);
    expect(JSON.stringify(fake.sessions.get(pinned)?.messages.map((m) => m.text))).toContain("into your window");
    const other = await open();
    const h2 = await register(other, { name: "owner", session: "p2" });
    expect(await call(other, "corral_send", { handle: h2, to: "window", text: "me too" })).toBe(
      "error: to: no agent named window in session p2; list them with corral_agents",
    );

    // A second session, or pinning an agent that has two, is refused naming the field the edit set.
    const more = await api<ApiError>(server, "PATCH", "/api/agents/window", { sessions: ["p1", "p2"] });
    expect([more.status, more.body.field]).toEqual([400, "sessions"]);
    expect((await api(server, "PATCH", "/api/agents/live", { sessions: ["p1", "p2"] })).status).toBe(200);
    const pin = await api<ApiError>(server, "PATCH", "/api/agents/live", { env: pinnedEnv });
    expect([pin.status, pin.body.field]).toEqual([400, "env"]);
  });
});

describe("the sessions setting, attacked", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  const HOSTILE: [string, string][] = [
    ["empty", ""],
    ["a leading '-'", "-lead"],
    ["65 characters", "x".repeat(65)],
    ["100,000 characters", "x".repeat(100_000)],
    ["a NUL byte", "a\u0000b"],
    ["a newline", "a\nb"],
    ["a tab", "tab\there"],
    ["DEL", "bell\u007f"],
    ["a Cyrillic е for e", "rеview"],
    ["a fullwidth r", "ｒeview"],
    ["a zero-width space", "review\u200b"],
    ["a path", "../etc"],
    ["a space", "a b"],
  ];

  test.each(HOSTILE)("a session name with %s is refused naming its place in the list and the rule, on create and on edit", async (_what, bad) => {
    const create = await api<ApiError>(server, "POST", "/api/agents", { name: "hostile", kind: "gemini", sessions: ["review", bad] });
    expect(create.status).toBe(400);
    expect(create.body.field).toBe("sessions.1");
    expect(create.body.issues).toEqual([
      { field: "sessions.1", message: "use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit" },
    ]);
    const edit = await api<ApiError>(server, "PATCH", "/api/agents/gemini", { sessions: [bad] });
    expect([edit.status, edit.body.field]).toEqual([400, "sessions.0"]);
    expect((await api<{ sessions: string[] }>(server, "GET", "/api/agents/gemini")).body.sessions).toEqual([]);
  });

  test("a name given twice, more than 100 sessions, and not a list are refused; null is not a second way to say every session", async () => {
    const twice = await api<ApiError>(server, "PATCH", "/api/agents/gemini", { sessions: ["review", "build", "review"] });
    expect(twice.status).toBe(400);
    expect(twice.body.issues).toEqual([{ field: "sessions.2", message: "review is named twice; name each session once" }]);
    const many = await api<ApiError>(server, "PATCH", "/api/agents/gemini", { sessions: Array.from({ length: 101 }, (_, i) => `s${i}`) });
    expect(many.status).toBe(400);
    expect(many.body.issues).toEqual([{ field: "sessions", message: "name at most 100 sessions, or none for every session" }]);
    // Tens of thousands of copies of one name: refused at once, without comparing each with every other.
    const flood = await api<ApiError>(server, "PATCH", "/api/agents/gemini", { sessions: Array.from({ length: 50_000 }, () => "review") });
    expect([flood.status, flood.body.field]).toEqual([400, "sessions"]);
    for (const wrong of [null, "review", { review: true }]) {
      expect((await api<ApiError>(server, "PATCH", "/api/agents/gemini", { sessions: wrong })).body.field).toBe("sessions");
    }
    expect((await api<{ sessions: string[] }>(server, "GET", "/api/agents/gemini")).body.sessions).toEqual([]);
  });
});
