import { rmSync } from "node:fs";
import type { HubAgentList, HubMessage, HubMessagePage, HubReceived, HubRegistration, HubSessionList, Job } from "@corral/shared";
import type { Client } from "@modelcontextprotocol/client";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from "vitest";
import { HUB_LIMITS } from "../src/conversations/hub.js";
import { api, sleep, startServer, tempDir, type TestServer, until } from "./helpers.js";
import { connectMcp, textOf } from "./mcp-client.js";
import { startServerProcess } from "./server-process.js";
import { WsClient } from "./ws-client.js";

const call = async (client: Client, name: string, args: Record<string, unknown> = {}) => textOf(await client.callTool({ name, arguments: args }));
const isError = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })).isError === true;

/** Ends an MCP session as a client that says goodbye does (DELETE with its session id). */
async function endSession(server: TestServer, client: Client): Promise<void> {
  const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId ?? "";
  const res = await fetch(`${server.url}/mcp`, { method: "DELETE", headers: { ...server.auth, "mcp-session-id": sessionId } });
  expect(res.status).toBe(200);
  await client.close();
}

const HOSTILE_NAMES = ["../etc", "a b", "x".repeat(65), "<script>", "a\nb", "", "-lead", "é", "a/b", "a\u0000b"];

describe("two agents in a session", () => {
  let server: TestServer;
  const clients: Client[] = [];
  const open = async () => {
    const client = await connectMcp(server);
    clients.push(client);
    return client;
  };
  beforeAll(async () => {
    server = await startServer({ CORRAL_PROGRESS_INTERVAL_MS: "100" });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  afterAll(() => server.close());

  test("register in review, exchange three messages with send/receive, read each other's history; a client in other sees neither", async () => {
    const alice = await open();
    const bob = await open();
    const eve = await open();
    expect(await call(alice, "corral_register", { name: "alice", session: "review", label: "writes the patch" })).toMatch(/^registered as alice/);
    expect(await call(bob, "corral_register", { name: "bob", session: "review", label: "reviews it" })).toMatch(/^registered as bob/);
    expect(await call(eve, "corral_register", { name: "eve", session: "other" })).toMatch(/^registered as eve/);

    const listed = await call(alice, "corral_agents");
    expect(listed).toContain("alice (client) · online · writes the patch");
    expect(listed).toContain("bob (client) · online · reviews it");
    expect(listed).toContain("gemini (Corral worker)");
    expect(listed).not.toContain("eve");

    // bob waits first; alice's first message wakes him.
    const bobWaits = call(bob, "corral_receive", { timeout_s: 30 });
    await sleep(200);
    expect(await call(alice, "corral_send", { to: "bob", text: "please review parser.ts" })).toMatch(/^sent #\d+ to bob$/);
    const first = await bobWaits;
    expect(first).toMatch(/^1 message\(s\)\n--- #\d+ from alice to bob/);
    expect(first).toContain("please review parser.ts");

    await call(bob, "corral_send", { to: "alice", text: "line 12 leaks a handle" });
    expect(await call(alice, "corral_receive", { timeout_s: 30 })).toContain("from bob to alice");
    await call(alice, "corral_send", { to: "bob", text: "fixed, thanks" });
    expect(await call(bob, "corral_receive", { timeout_s: 30 })).toContain("fixed, thanks");

    const history = await call(bob, "corral_read", { agent: "alice" });
    expect(history).toMatch(/^3 message\(s\) of alice/);
    const order = ["please review parser.ts", "line 12 leaks a handle", "fixed, thanks"].map((t) => history.indexOf(t));
    expect(order.every((at, i) => at > 0 && (i === 0 || at > (order[i - 1] ?? 0)))).toBe(true);
    expect(history).toMatch(/end of history; cursor \d+/);
    expect(await call(alice, "corral_read", { agent: "bob" })).toMatch(/^3 message\(s\) of bob/);

    // The other session: nobody there, not even by exact name.
    expect(await call(eve, "corral_agents")).not.toMatch(/alice|bob/);
    for (const [tool, args] of [
      ["corral_send", { to: "alice", text: "hi" }],
      ["corral_read", { agent: "bob" }],
      ["corral_agents", { session: "review" }],
    ] as const) {
      const text = await call(eve, tool, args);
      expect(text).toMatch(/^error: (to|agent|session): no (agent|session)/);
    }
    expect(await call(eve, "corral_receive", { timeout_s: 0 })).toBe("no message after 0 s");
  });

  test("a name taken in a session is refused, free in another, and free again once its session ends", async () => {
    const first = await open();
    const second = await open();
    await call(first, "corral_register", { name: "carol", session: "names" });
    expect(await call(second, "corral_register", { name: "carol", session: "names" })).toMatch(/^error: name: the name carol is taken/);
    expect(await call(second, "corral_register", { name: "gemini", session: "names" })).toMatch(/^error: name: gemini is one of Corral's agents/);
    expect(await call(second, "corral_register", { name: "carol", session: "names-2" })).toMatch(/^registered/);
    await endSession(server, first);
    expect((await api<HubAgentList>(server, "GET", "/api/conversations/names/agents")).body.agents[0]).toMatchObject({
      name: "carol",
      online: false,
    });
    const third = await open();
    expect(await call(third, "corral_register", { name: "carol", session: "names" })).toMatch(/^registered/);
  });

  test("sending or reading before registering says how to register", async () => {
    const client = await open();
    expect(await call(client, "corral_send", { to: "x", text: "hi" })).toMatch(/^error: name: register first/);
    expect(await call(client, "corral_receive", {})).toMatch(/^error: name: register first/);
    // Unregistered, corral_agents lists Corral's agents as it always did.
    expect(await call(client, "corral_agents")).toMatch(/^gemini \(gemini\) · model/m);
  });

  test("receive: a waiting message answers at once, a later one wakes the wait with progress meanwhile, a timeout says no message", async () => {
    const a = await open();
    const b = await open();
    await call(a, "corral_register", { name: "a", session: "recv" });
    await call(b, "corral_register", { name: "b", session: "recv" });

    await call(a, "corral_send", { to: "b", text: "already here" });
    await call(a, "corral_send", { to: "b", text: "me too" });
    const both = await call(b, "corral_receive", { timeout_s: 0 });
    expect(both).toMatch(/^2 message\(s\)/);
    expect(both.indexOf("already here")).toBeLessThan(both.indexOf("me too"));

    const progress: number[] = [];
    const later = b.callTool({ name: "corral_receive", arguments: { timeout_s: 30 } }, {
      onprogress: (p) => progress.push(p.progress),
      resetTimeoutOnProgress: true,
    });
    await until(() => (progress.length >= 2 ? true : undefined), 10_000, "progress while waiting");
    await call(a, "corral_send", { to: "b", text: "arrived later" });
    expect(textOf(await later)).toContain("arrived later");

    expect(await call(b, "corral_receive", { timeout_s: 1 })).toBe("no message after 1 s");
  });

  test("receive: a cancelled wait takes nothing, and neither does one whose client left", async () => {
    const a = await open();
    const b = await open();
    await call(a, "corral_register", { name: "a", session: "cancel" });
    await call(b, "corral_register", { name: "b", session: "cancel" });

    const controller = new AbortController();
    const cancelled = b.callTool({ name: "corral_receive", arguments: { timeout_s: 60 } }, { signal: controller.signal });
    await sleep(200);
    controller.abort();
    await expect(cancelled).rejects.toThrow();
    await sleep(200);
    await call(a, "corral_send", { to: "b", text: "after the cancel" });
    expect(await call(b, "corral_receive", { timeout_s: 0 })).toContain("after the cancel");

    // b's connection drops in the middle of a wait; its MCP session lives on until it ends.
    const waiting = b.callTool({ name: "corral_receive", arguments: { timeout_s: 60 } });
    waiting.catch(() => undefined);
    await sleep(300);
    const sessionId = (b.transport as StreamableHTTPClientTransport).sessionId ?? "";
    await b.close();
    await sleep(200);
    await call(a, "corral_send", { to: "b", text: "nobody was listening" });
    await fetch(`${server.url}/mcp`, { method: "DELETE", headers: { ...server.auth, "mcp-session-id": sessionId } });
    const again = await open();
    await call(again, "corral_register", { name: "b", session: "cancel" });
    expect(await call(again, "corral_receive", { timeout_s: 0 })).toContain("nobody was listening");
  });

  test("a session that ends during a receive ends the wait; one agent waits in one receive at a time", async () => {
    const a = await open();
    const b = await open();
    await call(a, "corral_register", { name: "a", session: "ends" });
    await call(b, "corral_register", { name: "b", session: "ends" });
    const waiting = call(b, "corral_receive", { timeout_s: 60 });
    waiting.catch(() => undefined);
    await sleep(200);
    expect(await call(b, "corral_receive", { timeout_s: 5 })).toMatch(/^error: name: b is already waiting/);
    await endSession(server, b);
    await call(a, "corral_send", { to: "b", text: "held for the next b" });
    const next = await open();
    await call(next, "corral_register", { name: "b", session: "ends" });
    expect(await call(next, "corral_receive", { timeout_s: 0 })).toContain("held for the next b");
  });

  test("corral_read pages from a cursor that always moves on, however long the history or a message", async () => {
    const a = await open();
    const b = await open();
    await call(a, "corral_register", { name: "a", session: "pages" });
    await call(b, "corral_register", { name: "b", session: "pages" });
    await call(a, "corral_send", { to: "b", text: "x".repeat(300_000) });
    for (let i = 0; i < 60; i++) await call(a, "corral_send", { to: "b", text: `note ${i}` });
    let cursor = 0;
    let seen = 0;
    for (let page = 0; page < 10; page++) {
      const text = await call(b, "corral_read", { agent: "a", cursor });
      const next = Number(/cursor (\d+) ---$/.exec(text)?.[1]);
      seen += Number(/^(\d+) message/.exec(text)?.[1] ?? 0);
      if (page === 0) expect(text).toContain("… (cut:");
      if (text.includes("end of history")) break;
      expect(next).toBeGreaterThan(cursor);
      cursor = next;
    }
    expect(seen).toBe(61);
  });

  test("an inbox holds at most its limit; hostile names are refused naming the field", async () => {
    const a = await open();
    await call(a, "corral_register", { name: "a", session: "bounds" });
    for (const name of HOSTILE_NAMES) {
      expect(await isError(a, "corral_register", { name, session: "bounds" })).toBe(true);
      expect(await call(a, "corral_register", { name: "ok", session: name })).toMatch(/session/);
      expect(await call(a, "corral_send", { to: name, text: "hi" })).toMatch(/to/);
      expect(await call(a, "corral_read", { agent: name })).toMatch(/agent/);
    }
    expect(await call(a, "corral_send", { to: "a", text: "" })).toMatch(/text/);

    const b = await open();
    await call(b, "corral_register", { name: "b", session: "bounds" });
    const hub = server.services.conversations;
    const member = { session: "bounds", name: "filler", door: "rest" as const };
    const filler = await hub.register(member.session, member.name, null, member.door);
    for (let i = 0; i < HUB_LIMITS.inbox; i++) await hub.send(filler, "b", `m${i}`);
    expect(await call(a, "corral_send", { to: "b", text: "one too many" })).toMatch(/^error: to: the inbox of b is full \(1000 messages waiting\)/);
    expect(await call(b, "corral_receive", { timeout_s: 0 })).toMatch(/^100 message\(s\)/);
    expect(await call(a, "corral_send", { to: "b", text: "room again" })).toMatch(/^sent/);
    await hub.leave(filler);
  });
});

describe("messages to Corral's worker agents", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  test("a message to a worker runs as a job; its answer comes back with the job id; the next one continues that job", async () => {
    const client = await connectMcp(server);
    try {
      await call(client, "corral_register", { name: "lead", session: "work" });
      const launch = vi.spyOn(server.services.launches, "launch");
      const sent = await call(client, "corral_send", { to: "gemini", text: "write notes.md first draft" });
      const jobId = /job (\w+) is answering/.exec(sent)?.[1] ?? "";
      expect(jobId).not.toBe("");
      expect(launch.mock.calls[0]?.[1]).toMatchObject({ prompt: "write notes.md first draft", session: undefined });
      expect(await call(client, "corral_send", { to: "gemini", text: "too soon" })).toMatch(/^error: to: gemini is still answering/);

      const answer = await call(client, "corral_receive", { timeout_s: 30 });
      expect(answer).toContain(`from gemini to lead · job ${jobId}`);
      expect(answer).toContain("done gemini");

      const again = await call(client, "corral_send", { to: "gemini", text: "now a second draft" });
      const second = /job (\w+) is answering/.exec(again)?.[1] ?? "";
      expect(launch.mock.calls[1]?.[1]).toMatchObject({ session: jobId });
      launch.mockRestore();
      expect(await call(client, "corral_receive", { timeout_s: 30 })).toContain(`job ${second}`);

      const page = await api<HubMessagePage>(server, "GET", "/api/conversations/work/messages?agent=gemini");
      expect(page.body.messages.map((m) => [m.from, m.to, m.jobId])).toEqual([
        ["lead", "gemini", jobId],
        ["gemini", "lead", jobId],
        ["lead", "gemini", second],
        ["gemini", "lead", second],
      ]);
    } finally {
      await client.close();
    }
  });

  test("a worker's error is its answer", async () => {
    const client = await connectMcp(server);
    try {
      await call(client, "corral_register", { name: "lead2", session: "work-errors" });
      await call(client, "corral_send", { to: "kiro", text: "stderr no credentials\nexit 3" });
      const answer = await call(client, "corral_receive", { timeout_s: 30 });
      expect(answer).toMatch(/from kiro to lead2 · job \w+/);
      expect(answer).toMatch(/error: failed/);
    } finally {
      await client.close();
    }
  });

  test("the second message's job continues the first's conversation (follow-ups)", async () => {
    const client = await connectMcp(server);
    try {
      await call(client, "corral_register", { name: "lead3", session: "work-thread" });
      const first = /job (\w+)/.exec(await call(client, "corral_send", { to: "gemini", text: "one" }))?.[1] ?? "";
      await call(client, "corral_receive", { timeout_s: 30 });
      const second = /job (\w+)/.exec(await call(client, "corral_send", { to: "gemini", text: "two" }))?.[1] ?? "";
      await call(client, "corral_receive", { timeout_s: 30 });
      const job = (await api<Job>(server, "GET", `/api/jobs/${second}`)).body;
      expect(job.followUpOf).toBe(first);
      expect(job.conversationId).toBe(first);
    } finally {
      await client.close();
    }
  });

  test("a worker whose kind keeps no conversation (kiro) answers each message afresh, never refused", async () => {
    const client = await connectMcp(server);
    try {
      await call(client, "corral_register", { name: "lead4", session: "work-fresh" });
      const ask = async (to: string, text: string) => {
        const id = /job (\w+)/.exec(await call(client, "corral_send", { to, text }))?.[1] ?? "";
        await call(client, "corral_receive", { timeout_s: 30 });
        return (await api<Job>(server, "GET", `/api/jobs/${id}`)).body;
      };
      // kiro keeps no session: each message is its own job, never refused.
      await ask("kiro", "print 1");
      const kiro = await ask("kiro", "print 2");
      expect(kiro.status).toBe("succeeded");
      expect(kiro.followUpOf).toBeNull();
    } finally {
      await client.close();
    }
  });
});

describe("what survives a restart", () => {
  const root = tempDir();
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  test("a worker's answer owed at shutdown and a client's waiting messages are delivered after the restart", async () => {
    const first = await startServer({}, { root });
    const lead = await connectMcp(first);
    await call(lead, "corral_register", { name: "lead", session: "durable" });
    const peer = await connectMcp(first);
    await call(peer, "corral_register", { name: "peer", session: "durable" });
    await call(peer, "corral_send", { to: "lead", text: "kept across the restart" });
    const jobId = /job (\w+)/.exec(await call(lead, "corral_send", { to: "kiro", text: "sleep 1.5\nslow answer" }))?.[1] ?? "";
    await Promise.all([lead.close(), peer.close()]);
    await first.close();

    const second = await startServer({}, { root });
    try {
      const agents = (await api<HubAgentList>(second, "GET", "/api/conversations/durable/agents")).body.agents;
      expect(agents.filter((a) => a.kind === "client").map((a) => [a.name, a.online])).toEqual([
        ["lead", false],
        ["peer", false],
      ]);
      const back = await connectMcp(second);
      await call(back, "corral_register", { name: "lead", session: "durable" });
      let received = "";
      for (let i = 0; i < 3 && !received.includes("slow answer"); i++) received += await call(back, "corral_receive", { timeout_s: 30 });
      expect(received).toContain("kept across the restart");
      expect(received).toContain(`from kiro to lead · job ${jobId}`);
      expect(received).toContain("slow answer");
      await back.close();
    } finally {
      await second.close();
    }
  });
});

describe("what survives a killed server", () => {
  const root = tempDir();
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  test("kill -9 while a worker answers and a message waits: both reach the agent once its name registers again", async () => {
    const env = { CORRAL_TOKEN: "test-token-0123456789" };
    const auth = { authorization: `Bearer ${env.CORRAL_TOKEN}` };
    const first = await startServerProcess(root, env);
    const at = (port: number) => ({ url: `http://127.0.0.1:${port}`, auth });
    const lead = await connectMcp(at(first.port));
    const peer = await connectMcp(at(first.port));
    await call(lead, "corral_register", { name: "lead", session: "killed" });
    await call(peer, "corral_register", { name: "peer", session: "killed" });
    await call(peer, "corral_send", { to: "lead", text: "stored before the kill" });
    const jobId = /job (\w+)/.exec(await call(lead, "corral_send", { to: "kiro", text: "sleep 1.5\nanswer after the kill" }))?.[1] ?? "";
    first.child.kill("SIGKILL");
    await new Promise((resolve) => first.child.once("exit", resolve));
    await Promise.all([lead.close().catch(() => undefined), peer.close().catch(() => undefined)]);

    const second = await startServerProcess(root, env);
    try {
      const back = await connectMcp(at(second.port));
      await call(back, "corral_register", { name: "lead", session: "killed" });
      let received = "";
      for (let i = 0; i < 3 && !received.includes("answer after the kill"); i++) received += await call(back, "corral_receive", { timeout_s: 30 });
      expect(received).toContain("stored before the kill");
      expect(received).toContain(`from kiro to lead · job ${jobId}`);
      expect(received).toContain("answer after the kill");
      await back.close();
    } finally {
      await second.stop();
    }
  });
});

describe("REST and WebSocket doors", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  const post = <T>(url: string, body: unknown) => api<T>(server, "POST", url, body);

  test("a REST client registers, sends to an MCP client, waits for its answer, and leaves", async () => {
    const reg = await api<HubRegistration>(server, "POST", "/api/conversations/rest/agents", { name: "script", label: "a shell script" });
    expect(reg.status).toBe(201);
    expect(reg.body.agent).toMatchObject({ name: "script", kind: "client", online: true });
    const key = reg.body.key;
    const mcp = await connectMcp(server);
    try {
      await call(mcp, "corral_register", { name: "helper", session: "rest" });
      const sent = await post<HubMessage>("/api/conversations/rest/messages", { key, to: "helper", text: "ping" });
      expect(sent.status).toBe(201);
      expect(sent.body).toMatchObject({ from: "script", to: "helper", text: "ping", jobId: null });
      const wait = post<HubReceived>("/api/conversations/rest/receive", { key, timeoutS: 30 });
      await sleep(200);
      expect(await call(mcp, "corral_receive", { timeout_s: 5 })).toContain("ping");
      await call(mcp, "corral_send", { to: "script", text: "pong" });
      expect((await wait).body.messages.map((m) => m.text)).toEqual(["pong"]);
      expect((await post<HubReceived>("/api/conversations/rest/receive", { key, timeoutS: 0 })).body.messages).toEqual([]);

      // A REST caller that hangs up in the middle of a wait takes nothing either.
      const hangUp = new AbortController();
      const dropped = fetch(`${server.url}/api/conversations/rest/receive`, {
        method: "POST",
        headers: { ...server.auth, "content-type": "application/json" },
        body: JSON.stringify({ key, timeoutS: 60 }),
        signal: hangUp.signal,
      });
      dropped.catch(() => undefined);
      await sleep(200);
      hangUp.abort();
      await sleep(200);
      await call(mcp, "corral_send", { to: "script", text: "after the hang-up" });
      const kept = await post<HubReceived>("/api/conversations/rest/receive", { key, timeoutS: 0 });
      expect(kept.body.messages.map((m) => m.text)).toEqual(["after the hang-up"]);

      const sessions = (await api<HubSessionList>(server, "GET", "/api/conversations")).body.sessions;
      expect(sessions.find((s) => s.name === "rest")).toMatchObject({ agents: 2, online: 2, messages: 3 });

      // The key is the session's: another session's path does not find it.
      expect((await post("/api/conversations/other/receive", { key, timeoutS: 0 })).status).toBe(404);
      expect((await post("/api/conversations/rest/leave", { key })).status).toBe(204);
      const gone = await post<{ field: string }>("/api/conversations/rest/messages", { key, to: "helper", text: "x" });
      expect(gone).toMatchObject({ status: 404, body: { field: "key" } });
    } finally {
      await mcp.close();
    }
  });

  test("every door refuses a caller without credentials", async () => {
    for (const [method, url] of [
      ["GET", "/api/conversations"],
      ["GET", "/api/conversations/review/agents"],
      ["GET", "/api/conversations/review/messages"],
      ["POST", "/api/conversations/review/agents"],
      ["POST", "/api/conversations/review/messages"],
      ["POST", "/api/conversations/review/receive"],
      ["POST", "/api/conversations/review/leave"],
    ]) {
      const res = await fetch(`${server.url}${url}`, { method });
      expect(res.status, `${method} ${url}`).toBe(401);
    }
    await expect(connectMcp(server, "/mcp", {})).rejects.toThrow();
    await expect(WsClient.open(server, {})).rejects.toThrow(/401/);
  });

  test("hostile names get a 400 naming the field on REST, and an error naming it on the WebSocket", async () => {
    for (const name of HOSTILE_NAMES.filter((n) => n && !n.includes("/") && !n.includes("\u0000"))) {
      const session = encodeURIComponent(name);
      const listed = await api<{ field: string }>(server, "GET", `/api/conversations/${session}/agents`);
      expect(listed, name).toMatchObject({ status: 400, body: { field: "session" } });
      const reg = await api<{ field: string }>(server, "POST", "/api/conversations/fine/agents", { name });
      expect(reg, name).toMatchObject({ status: 400, body: { field: "name" } });
      const read = await api<{ field: string }>(server, "GET", `/api/conversations/fine/messages?agent=${session}`);
      expect(read, name).toMatchObject({ status: 400, body: { field: "agent" } });
    }
    const bad = await post<{ field: string }>("/api/conversations/fine/receive", { key: "../../etc/passwd", timeoutS: 0 });
    expect(bad).toMatchObject({ status: 400, body: { field: "key" } });
    const ws = await WsClient.open(server);
    try {
      ws.send({ type: "subscribe_conversation", session: "../etc" });
      expect((await ws.waitFor("error")).field).toBe("session");
    } finally {
      await ws.close();
    }
  });

  test("the WebSocket replays a session's messages from a cursor, then sends them live, with its agents as they change", async () => {
    const a = await connectMcp(server);
    const b = await connectMcp(server);
    const other = await connectMcp(server);
    const ws = await WsClient.open(server);
    try {
      await call(a, "corral_register", { name: "a", session: "live" });
      await call(b, "corral_register", { name: "b", session: "live" });
      await call(other, "corral_register", { name: "a", session: "live-other" });
      const old = await call(a, "corral_send", { to: "b", text: "before" });
      const oldId = Number(/#(\d+)/.exec(old)?.[1]);
      await call(a, "corral_send", { to: "b", text: "also before" });
      ws.send({ type: "subscribe_conversation", session: "live", cursor: oldId });
      await ws.waitFor("conversation_message", (m) => m.message.text === "also before");
      await ws.waitFor("conversation_agents", (m) => m.agents.some((x) => x.name === "b" && x.online));
      await call(b, "corral_send", { to: "a", text: "live one" });
      await call(other, "corral_register", { name: "z", session: "live-other" });
      await call(other, "corral_send", { to: "z", text: "elsewhere" });
      await ws.waitFor("conversation_message", (m) => m.message.text === "live one");
      await endSession(server, b);
      await ws.waitFor("conversation_agents", (m) => m.agents.some((x) => x.name === "b" && !x.online));
      const texts = ws.of("conversation_message").map((m) => m.message.text);
      expect(texts).toEqual(["also before", "live one"]);
    } finally {
      await ws.close();
      await Promise.all([a.close(), other.close()]);
    }
  });
});
