import { createHash } from "node:crypto";
import { rmSync } from "node:fs";
import type { HubAgentList, HubMessage, HubMessagePage, HubReceived, HubRegistration, HubSessionList, Job } from "@corral/shared";
import type { Client } from "@modelcontextprotocol/client";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from "vitest";
import { HUB_LIMITS } from "../src/conversations/hub.js";
import { api, sleep, startServer, tempDir, type TestServer, until } from "./helpers.js";
import { connectMcp, textOf, TEST_MCP_ERA } from "./mcp-client.js";
import { withRegistryOf } from "./registry-of.js";
import { startServerProcess } from "./server-process.js";
import { WsClient } from "./ws-client.js";

/** The URL whose tools include the hub's (`corral_register`, `_send`, `_receive`, `_read`). */
const HUB = "/mcp?toolsets=hub";

const call = async (client: Client, name: string, args: Record<string, unknown> = {}) => textOf(await client.callTool({ name, arguments: args }));
const isError = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })).isError === true;

/** corral_register's handle: what the agent's later calls carry. */
async function register(client: Client, args: Record<string, unknown>): Promise<string> {
  const text = await call(client, "corral_register", args);
  const handle = /^handle: ([A-Za-z0-9_-]+)$/m.exec(text)?.[1];
  if (!handle) throw new Error(`no handle in: ${text}`);
  return handle;
}

/** Ends an MCP session as a client that says goodbye does (DELETE with its session id); a 2026-07-28 client has none to end. */
async function endSession(server: TestServer, client: Client): Promise<void> {
  if (TEST_MCP_ERA === "modern") return client.close();
  const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId ?? "";
  const res = await fetch(`${server.url}${HUB}`, { method: "DELETE", headers: { ...server.auth, "mcp-session-id": sessionId } });
  expect(res.status).toBe(200);
  await client.close();
}

const online = async (server: Pick<TestServer, "url" | "auth">, session: string) =>
  (await api<HubAgentList>(server as TestServer, "GET", `/api/conversations/${session}/agents`)).body.agents
    .filter((a) => a.kind === "client")
    .map((a) => [a.name, a.online]);

const GONE = /^error: handle: no live registration has this handle: .*; register again with corral_register and use the handle it answers$/;

const HOSTILE_NAMES = ["../etc", "a b", "x".repeat(65), "<script>", "a\nb", "", "-lead", "é", "a/b", "a\u0000b"];

describe("two agents in a session", () => {
  let server: TestServer;
  const clients: Client[] = [];
  const open = async () => {
    const client = await connectMcp(server, HUB);
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

  test("register in review, exchange three messages with send/receive, read each other's history; a client in other reaches neither", async () => {
    const alice = await open();
    const bob = await open();
    const eve = await open();
    const registered = await call(alice, "corral_register", { name: "alice", session: "review", label: "writes the patch" });
    expect(registered).toMatch(/^registered as alice in session review\nhandle: [A-Za-z0-9_-]{43}\n/);
    const a = /handle: (\S+)/.exec(registered)?.[1] ?? "";
    const b = await register(bob, { name: "bob", session: "review", label: "reviews it" });
    const e = await register(eve, { name: "eve", session: "other" });
    expect(new Set([a, b, e]).size).toBe(3);

    const listed = await call(alice, "corral_agents", { session: "review" });
    expect(listed).toMatch(/^alice \(client\) · online · last seen \d+ s ago \(\d{4}-\d\d-\d\dT[\d:.]+Z\) · writes the patch$/m);
    expect(listed).toMatch(/^bob \(client\) · online · last seen \d+ s ago \(.+Z\) · reviews it$/m);
    expect(listed).toContain("gemini (Corral worker)");
    expect(listed).not.toContain("eve");

    // bob waits first; alice's first message wakes him.
    const bobWaits = call(bob, "corral_receive", { handle: b, timeout_s: 30 });
    await sleep(200);
    expect(await call(alice, "corral_send", { handle: a, to: "bob", text: "please review parser.ts" })).toMatch(/^sent #\d+ to bob$/);
    const first = await bobWaits;
    expect(first).toMatch(/^1 message\(s\)\n--- #\d+ from alice to bob/);
    expect(first).toContain("please review parser.ts");

    await call(bob, "corral_send", { handle: b, to: "alice", text: "line 12 leaks a handle" });
    expect(await call(alice, "corral_receive", { handle: a, timeout_s: 30 })).toContain("from bob to alice");
    await call(alice, "corral_send", { handle: a, to: "bob", text: "fixed, thanks" });
    expect(await call(bob, "corral_receive", { handle: b, timeout_s: 30 })).toContain("fixed, thanks");

    const history = await call(bob, "corral_read", { handle: b, agent: "alice" });
    expect(history).toMatch(/^3 message\(s\) of alice/);
    const order = ["please review parser.ts", "line 12 leaks a handle", "fixed, thanks"].map((t) => history.indexOf(t));
    expect(order.every((at, i) => at > 0 && (i === 0 || at > (order[i - 1] ?? 0)))).toBe(true);
    expect(history).toMatch(/end of history; cursor \d+/);
    expect(await call(alice, "corral_read", { handle: a, agent: "bob" })).toMatch(/^3 message\(s\) of bob/);

    // The other session's handle reaches nobody here, not even by exact name.
    for (const [tool, args] of [
      ["corral_send", { handle: e, to: "alice", text: "hi" }],
      ["corral_read", { handle: e, agent: "bob" }],
    ] as const) {
      expect(await call(eve, tool, args)).toMatch(/^error: (to|agent): no agent named (alice|bob) in session other/);
    }
    expect(await call(eve, "corral_receive", { handle: e, timeout_s: 0 })).toBe("no message after 0 s");
  });

  test("a name taken in a session is refused, free in another, and free again once its holder moves on with its handle", async () => {
    const first = await open();
    const second = await open();
    const carol = await register(first, { name: "carol", session: "names" });
    expect(await call(second, "corral_register", { name: "carol", session: "names" })).toMatch(/^error: name: the name carol is taken/);
    expect(await call(second, "corral_register", { name: "gemini", session: "names" })).toMatch(/^error: name: gemini is one of Corral's agents/);
    await register(second, { name: "carol", session: "names-2" });
    // Someone else's handle does not replace carol: only a live one does, and it replaces its own.
    expect(await call(second, "corral_register", { name: "carol", session: "names", handle: "x".repeat(43) })).toMatch(/name carol is taken/);

    // Registering again with the handle: the same name gets a new handle, the old one is refused.
    const again = await register(first, { name: "carol", session: "names", handle: carol });
    expect(again).not.toBe(carol);
    expect(await call(first, "corral_receive", { handle: carol, timeout_s: 0 })).toMatch(GONE);
    expect(await call(first, "corral_receive", { handle: again, timeout_s: 0 })).toBe("no message after 0 s");
    // Moving to another name with it frees carol.
    await register(first, { name: "carol-2", session: "names", handle: again });
    expect(await online(server, "names")).toEqual([
      ["carol", false],
      ["carol-2", true],
    ]);
    await register(await open(), { name: "carol", session: "names" });
  });

  test("without a handle, or with one never given, a call is refused naming handle and saying to register again", async () => {
    const client = await open();
    for (const [tool, args] of [
      ["corral_send", { to: "x", text: "hi" }],
      ["corral_receive", {}],
      ["corral_read", { agent: "x" }],
    ] as const) {
      const missing = await client.callTool({ name: tool, arguments: args });
      expect(missing.isError, tool).toBe(true);
      expect(textOf(missing), tool).toMatch(/handle/);
      expect(await call(client, tool, { ...args, handle: "A".repeat(43) }), tool).toMatch(GONE);
      for (const hostile of ["", "../../etc/passwd", "a\nb", "x".repeat(65), "é".repeat(30)]) {
        expect(textOf(await client.callTool({ name: tool, arguments: { ...args, handle: hostile } })), tool).toMatch(/handle/);
      }
    }
    // corral_agents lists Corral's agents as it always did.
    expect(await call(client, "corral_agents")).toMatch(/^gemini \(gemini\) · model/m);
  });

  test("the registry keeps only the handle's sha256: a row read out of it is not the handle", async () => {
    const client = await open();
    const handle = await register(client, { name: "hashed", session: "rows" });
    const row = await withRegistryOf(server.dataDir, (registry) => registry.conversations.agent("rows", "hashed"));
    expect(row?.handleHash).toBe(createHash("sha256").update(handle).digest("hex"));
    expect(JSON.stringify(row)).not.toContain(handle);
    // The hash itself is not a handle.
    expect(await call(client, "corral_receive", { handle: row?.handleHash?.slice(0, 64), timeout_s: 0 })).toMatch(GONE);
  });

  test("receive: a waiting message answers at once, a later one wakes the wait with progress meanwhile, a timeout says no message", async () => {
    const a = await open();
    const b = await open();
    const ha = await register(a, { name: "a", session: "recv" });
    const hb = await register(b, { name: "b", session: "recv" });

    await call(a, "corral_send", { handle: ha, to: "b", text: "already here" });
    await call(a, "corral_send", { handle: ha, to: "b", text: "me too" });
    const both = await call(b, "corral_receive", { handle: hb, timeout_s: 0 });
    expect(both).toMatch(/^2 message\(s\)/);
    expect(both.indexOf("already here")).toBeLessThan(both.indexOf("me too"));

    const progress: number[] = [];
    const later = b.callTool(
      { name: "corral_receive", arguments: { handle: hb, timeout_s: 30 } },
      {
        onprogress: (p) => progress.push(p.progress),
        resetTimeoutOnProgress: true,
      },
    );
    await until(() => (progress.length >= 2 ? true : undefined), 10_000, "progress while waiting");
    await call(a, "corral_send", { handle: ha, to: "b", text: "arrived later" });
    expect(textOf(await later)).toContain("arrived later");

    expect(await call(b, "corral_receive", { handle: hb, timeout_s: 1 })).toBe("no message after 1 s");
  });

  test("receive: a cancelled wait takes nothing, nor one whose client left; the handle goes on in another MCP session", async () => {
    const a = await open();
    const b = await open();
    const ha = await register(a, { name: "a", session: "cancel" });
    const hb = await register(b, { name: "b", session: "cancel" });

    const controller = new AbortController();
    const cancelled = b.callTool({ name: "corral_receive", arguments: { handle: hb, timeout_s: 60 } }, { signal: controller.signal });
    await sleep(200);
    controller.abort();
    await expect(cancelled).rejects.toThrow();
    await sleep(200);
    await call(a, "corral_send", { handle: ha, to: "b", text: "after the cancel" });
    expect(await call(b, "corral_receive", { handle: hb, timeout_s: 0 })).toContain("after the cancel");

    // b's connection drops in the middle of a wait, and its MCP session ends: the registration is the handle's.
    const waiting = b.callTool({ name: "corral_receive", arguments: { handle: hb, timeout_s: 60 } });
    waiting.catch(() => undefined);
    await sleep(300);
    await endSession(server, b);
    await sleep(200);
    expect(await online(server, "cancel")).toEqual([
      ["a", true],
      ["b", true],
    ]);
    await call(a, "corral_send", { handle: ha, to: "b", text: "nobody was listening" });
    const elsewhere = await open();
    expect(await call(elsewhere, "corral_receive", { handle: hb, timeout_s: 0 })).toContain("nobody was listening");
    expect(await call(elsewhere, "corral_send", { handle: hb, to: "a", text: "from a new session" })).toMatch(/^sent/);
    expect(await call(a, "corral_receive", { handle: ha, timeout_s: 0 })).toContain("from b to a");
  });

  test("a registration replaced during a receive ends the wait; one agent waits in one receive at a time", async () => {
    const a = await open();
    const b = await open();
    const ha = await register(a, { name: "a", session: "ends" });
    const hb = await register(b, { name: "b", session: "ends" });
    const waiting = call(b, "corral_receive", { handle: hb, timeout_s: 60 });
    await sleep(200);
    expect(await call(a, "corral_receive", { handle: hb, timeout_s: 5 })).toMatch(/^error: handle: b is already waiting/);
    const next = await register(a, { name: "b2", session: "ends", handle: hb });
    expect(await waiting).toBe("no message after 60 s");
    await call(a, "corral_send", { handle: next, to: "b", text: "held for the next b" });
    expect(await call(b, "corral_receive", { handle: await register(b, { name: "b", session: "ends" }), timeout_s: 0 })).toContain(
      "held for the next b",
    );
    expect(await call(a, "corral_send", { handle: ha, to: "b", text: "a still lives" })).toMatch(/^sent/);
  });

  test("corral_read pages from a cursor that always moves on, however long the history or a message", async () => {
    const a = await open();
    const b = await open();
    const ha = await register(a, { name: "a", session: "pages" });
    const hb = await register(b, { name: "b", session: "pages" });
    await call(a, "corral_send", { handle: ha, to: "b", text: "x".repeat(300_000) });
    for (let i = 0; i < 60; i++) await call(a, "corral_send", { handle: ha, to: "b", text: `note ${i}` });
    let cursor = 0;
    let seen = 0;
    for (let page = 0; page < 10; page++) {
      const text = await call(b, "corral_read", { handle: hb, agent: "a", cursor });
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
    const ha = await register(a, { name: "a", session: "bounds" });
    for (const name of HOSTILE_NAMES) {
      expect(await isError(a, "corral_register", { name, session: "bounds" })).toBe(true);
      expect(await call(a, "corral_register", { name: "ok", session: name })).toMatch(/session/);
      expect(await call(a, "corral_send", { handle: ha, to: name, text: "hi" })).toMatch(/to/);
      expect(await call(a, "corral_read", { handle: ha, agent: name })).toMatch(/agent/);
    }
    expect(await call(a, "corral_send", { handle: ha, to: "a", text: "" })).toMatch(/text/);

    const b = await open();
    const hb = await register(b, { name: "b", session: "bounds" });
    const hub = server.services.conversations;
    const { member: filler } = await hub.register("bounds", "filler", null);
    for (let i = 0; i < HUB_LIMITS.inbox; i++) await hub.send(filler, "b", `m${i}`, "rest");
    expect(await call(a, "corral_send", { handle: ha, to: "b", text: "one too many" })).toMatch(
      /^error: to: the inbox of b is full \(1000 messages waiting\)/,
    );
    expect(await call(b, "corral_receive", { handle: hb, timeout_s: 0 })).toMatch(/^100 message\(s\)/);
    expect(await call(a, "corral_send", { handle: ha, to: "b", text: "room again" })).toMatch(/^sent/);
    await hub.leave(filler);
  });
});

describe("leases", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ CORRAL_HUB_LEASE_S: "2" });
  });
  afterAll(() => server.close());

  test("a registration unused for its lease ends and frees its name; a receive in progress keeps it", async () => {
    const client = await connectMcp(server, HUB);
    // Registered by a client that then goes away (its socket closes; no DELETE): nothing of it shows again.
    const gone = await connectMcp(server, HUB);
    try {
      const kept = await register(client, { name: "waiter", session: "lease" });
      const lapsed = await register(gone, { name: "idle", session: "lease" });
      await gone.close();
      // The receive lasts past the lease: its wait is use, and the lease runs afresh from its end.
      expect(await call(client, "corral_receive", { handle: kept, timeout_s: 5 })).toBe("no message after 5 s");
      expect(await call(client, "corral_receive", { handle: kept, timeout_s: 0 })).toBe("no message after 0 s");
      await until(async () => ((await online(server, "lease")).some(([n, on]) => n === "idle" && !on) ? true : undefined), 10_000, "idle expired");
      expect(await call(client, "corral_send", { handle: lapsed, to: "waiter", text: "too late" })).toMatch(GONE);
      const taker = await register(client, { name: "idle", session: "lease" });
      expect(await call(client, "corral_send", { handle: taker, to: "waiter", text: "new idle" })).toMatch(/^sent/);
    } finally {
      await client.close();
    }
  });
});

describe("the cap on registrations", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ CORRAL_HUB_MAX_REGISTRATIONS: "3" });
  });
  afterAll(() => server.close());

  test("registrations past CORRAL_HUB_MAX_REGISTRATIONS are refused on both doors, naming the setting; one leaving makes room", async () => {
    const client = await connectMcp(server, HUB);
    try {
      const first = await api<HubRegistration>(server, "POST", "/api/conversations/cap/agents", { name: "r1" });
      const handles = [await register(client, { name: "m1", session: "cap" }), await register(client, { name: "m2", session: "cap" })];
      const full = await call(client, "corral_register", { name: "m3", session: "cap" });
      expect(full).toMatch(/^error: 3 conversation registrations are live already \(CORRAL_HUB_MAX_REGISTRATIONS\); leave one/);
      const refused = await api<{ error: string }>(server, "POST", "/api/conversations/cap/agents", { name: "r2" });
      expect(refused.status).toBe(503);
      expect(refused.body.error).toMatch(/CORRAL_HUB_MAX_REGISTRATIONS/);
      // Replacing one's own registration needs no room.
      handles[0] = await register(client, { name: "m1", session: "cap", handle: handles[0] });
      expect((await api(server, "POST", "/api/conversations/cap/leave", { key: first.body.key })).status).toBe(204);
      await register(client, { name: "m3", session: "cap" });
    } finally {
      await client.close();
    }
  });
});

describe("messages to Corral's worker agents", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  test("a message to a worker runs as a job; its answer comes back with the job id; the next one continues that job", async () => {
    const client = await connectMcp(server, HUB);
    try {
      const handle = await register(client, { name: "lead", session: "work" });
      const launch = vi.spyOn(server.services.launches, "launch");
      const sent = await call(client, "corral_send", { handle, to: "gemini", text: "write notes.md first draft" });
      const jobId = /job (\w+) is answering/.exec(sent)?.[1] ?? "";
      expect(jobId).not.toBe("");
      expect(launch.mock.calls[0]?.[1]).toMatchObject({ prompt: "write notes.md first draft", session: undefined });
      expect(launch.mock.calls[0]?.[2]).toBe("mcp");
      expect(await call(client, "corral_send", { handle, to: "gemini", text: "too soon" })).toMatch(/^error: to: gemini is still answering/);

      const answer = await call(client, "corral_receive", { handle, timeout_s: 30 });
      expect(answer).toContain(`from gemini to lead · job ${jobId}`);
      expect(answer).toContain("done gemini");

      const again = await call(client, "corral_send", { handle, to: "gemini", text: "now a second draft" });
      const second = /job (\w+) is answering/.exec(again)?.[1] ?? "";
      expect(launch.mock.calls[1]?.[1]).toMatchObject({ session: jobId });
      launch.mockRestore();
      expect(await call(client, "corral_receive", { handle, timeout_s: 30 })).toContain(`job ${second}`);

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
    const client = await connectMcp(server, HUB);
    try {
      const handle = await register(client, { name: "lead2", session: "work-errors" });
      await call(client, "corral_send", { handle, to: "kiro", text: "stderr no credentials\nexit 3" });
      const answer = await call(client, "corral_receive", { handle, timeout_s: 30 });
      expect(answer).toMatch(/from kiro to lead2 · job \w+/);
      expect(answer).toMatch(/error: failed/);
    } finally {
      await client.close();
    }
  });

  test("the second message's job continues the first's conversation (follow-ups)", async () => {
    const client = await connectMcp(server, HUB);
    try {
      const handle = await register(client, { name: "lead3", session: "work-thread" });
      const first = /job (\w+)/.exec(await call(client, "corral_send", { handle, to: "gemini", text: "one" }))?.[1] ?? "";
      await call(client, "corral_receive", { handle, timeout_s: 30 });
      const second = /job (\w+)/.exec(await call(client, "corral_send", { handle, to: "gemini", text: "two" }))?.[1] ?? "";
      await call(client, "corral_receive", { handle, timeout_s: 30 });
      const job = (await api<Job>(server, "GET", `/api/jobs/${second}`)).body;
      expect(job.followUpOf).toBe(first);
      expect(job.conversationId).toBe(first);
    } finally {
      await client.close();
    }
  });

  test("a worker whose kind keeps no conversation (kiro) answers each message afresh, never refused", async () => {
    const client = await connectMcp(server, HUB);
    try {
      const handle = await register(client, { name: "lead4", session: "work-fresh" });
      const ask = async (to: string, text: string) => {
        const id = /job (\w+)/.exec(await call(client, "corral_send", { handle, to, text }))?.[1] ?? "";
        await call(client, "corral_receive", { handle, timeout_s: 30 });
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

  test("the same handles work after a restart (same names, same inboxes, still online); a worker's owed answer is delivered", async () => {
    const first = await startServer({}, { root });
    const lead = await connectMcp(first, HUB);
    const hl = await register(lead, { name: "lead", session: "durable" });
    const peer = await connectMcp(first, HUB);
    const hp = await register(peer, { name: "peer", session: "durable" });
    const script = (await api<HubRegistration>(first, "POST", "/api/conversations/durable/agents", { name: "script" })).body.key;
    await call(peer, "corral_send", { handle: hp, to: "lead", text: "kept across the restart" });
    const jobId = /job (\w+)/.exec(await call(lead, "corral_send", { handle: hl, to: "kiro", text: "sleep 1.5\nslow answer" }))?.[1] ?? "";
    await Promise.all([lead.close(), peer.close()]);
    await first.close();

    const second = await startServer({}, { root });
    try {
      // Presence follows the lease, which the restart did not end.
      expect(await online(second, "durable")).toEqual([
        ["lead", true],
        ["peer", true],
        ["script", true],
      ]);
      const back = await connectMcp(second, HUB);
      // Nobody else can take the names meanwhile.
      expect(await call(back, "corral_register", { name: "lead", session: "durable" })).toMatch(/^error: name: the name lead is taken/);
      let received = "";
      for (let i = 0; i < 3 && !received.includes("slow answer"); i++) received += await call(back, "corral_receive", { handle: hl, timeout_s: 30 });
      expect(received).toContain("kept across the restart");
      expect(received).toContain(`from kiro to lead · job ${jobId}`);
      expect(received).toContain("slow answer");
      // The REST key is the same kind of handle: it survived too, and MCP and REST reach each other.
      expect((await api(second, "POST", "/api/conversations/durable/messages", { key: script, to: "peer", text: "rest after restart" })).status).toBe(
        201,
      );
      expect(await call(back, "corral_receive", { handle: hp, timeout_s: 5 })).toContain("from script to peer");
      await back.close();
    } finally {
      await second.close();
    }
  });

  test("a lease that ran out while the server was down ends at the next start and frees the name", async () => {
    const lapsedRoot = tempDir();
    try {
      const first = await startServer({ CORRAL_HUB_LEASE_S: "1" }, { root: lapsedRoot });
      const client = await connectMcp(first, HUB);
      const handle = await register(client, { name: "gone", session: "down" });
      await client.close();
      await first.close();
      await sleep(1_200);
      const second = await startServer({ CORRAL_HUB_LEASE_S: "1" }, { root: lapsedRoot });
      try {
        const row = await withRegistryOf(second.dataDir, (registry) => registry.conversations.agent("down", "gone"));
        expect(row).toMatchObject({ handleHash: null });
        expect(row?.endedAt).not.toBeNull();
        const back = await connectMcp(second, HUB);
        expect(await call(back, "corral_receive", { handle, timeout_s: 0 })).toMatch(GONE);
        await register(back, { name: "gone", session: "down" });
        await back.close();
      } finally {
        await second.close();
      }
    } finally {
      rmSync(lapsedRoot, { recursive: true, force: true });
    }
  });
});

describe("what survives a killed server", () => {
  const root = tempDir();
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  test("kill -9 while a worker answers and a message waits: the same handle receives both after the restart", async () => {
    const env = { CORRAL_TOKEN: "test-token-0123456789" };
    const auth = { authorization: `Bearer ${env.CORRAL_TOKEN}` };
    const first = await startServerProcess(root, env);
    const at = (port: number) => ({ url: `http://127.0.0.1:${port}`, auth });
    const lead = await connectMcp(at(first.port), HUB);
    const peer = await connectMcp(at(first.port), HUB);
    const hl = await register(lead, { name: "lead", session: "killed" });
    const hp = await register(peer, { name: "peer", session: "killed" });
    await call(peer, "corral_send", { handle: hp, to: "lead", text: "stored before the kill" });
    const jobId = /job (\w+)/.exec(await call(lead, "corral_send", { handle: hl, to: "kiro", text: "sleep 1.5\nanswer after the kill" }))?.[1] ?? "";
    first.child.kill("SIGKILL");
    await new Promise((resolve) => first.child.once("exit", resolve));
    await Promise.all([lead.close().catch(() => undefined), peer.close().catch(() => undefined)]);

    const second = await startServerProcess(root, env);
    try {
      const back = await connectMcp(at(second.port), HUB);
      let received = "";
      for (let i = 0; i < 3 && !received.includes("answer after the kill"); i++)
        received += await call(back, "corral_receive", { handle: hl, timeout_s: 30 });
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

  test("a REST client registers, sends to an MCP client, waits for its answer, and leaves; its key is an MCP handle too", async () => {
    const reg = await api<HubRegistration>(server, "POST", "/api/conversations/rest/agents", { name: "script", label: "a shell script" });
    expect(reg.status).toBe(201);
    expect(reg.body.agent).toMatchObject({ name: "script", kind: "client", online: true });
    const key = reg.body.key;
    const mcp = await connectMcp(server, HUB);
    try {
      const helper = await register(mcp, { name: "helper", session: "rest" });
      const sent = await post<HubMessage>("/api/conversations/rest/messages", { key, to: "helper", text: "ping" });
      expect(sent.status).toBe(201);
      expect(sent.body).toMatchObject({ from: "script", to: "helper", text: "ping", jobId: null });
      const wait = post<HubReceived>("/api/conversations/rest/receive", { key, timeoutS: 30 });
      await sleep(200);
      expect(await call(mcp, "corral_receive", { handle: helper, timeout_s: 5 })).toContain("ping");
      await call(mcp, "corral_send", { handle: helper, to: "script", text: "pong" });
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
      await call(mcp, "corral_send", { handle: helper, to: "script", text: "after the hang-up" });
      const kept = await post<HubReceived>("/api/conversations/rest/receive", { key, timeoutS: 0 });
      expect(kept.body.messages.map((m) => m.text)).toEqual(["after the hang-up"]);

      const sessions = (await api<HubSessionList>(server, "GET", "/api/conversations")).body.sessions;
      expect(sessions.find((s) => s.name === "rest")).toMatchObject({ agents: 2, online: 2, messages: 3 });

      // One registration, two doors: the REST key works as an MCP handle, and an MCP handle as a REST key.
      expect(await call(mcp, "corral_send", { handle: key, to: "helper", text: "sent over MCP with the key" })).toMatch(/^sent/);
      const overRest = await post<HubReceived>("/api/conversations/rest/receive", { key: helper, timeoutS: 0 });
      expect(overRest.body.messages.map((m) => [m.from, m.text])).toEqual([["script", "sent over MCP with the key"]]);

      // The key is the session's: another session's path does not find it.
      expect(await post("/api/conversations/other/receive", { key, timeoutS: 0 })).toMatchObject({ status: 404, body: { field: "key" } });
      expect(await post("/api/conversations/rest/receive", { key: "B".repeat(43), timeoutS: 0 })).toMatchObject({
        status: 404,
        body: { field: "key" },
      });
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
    const a = await connectMcp(server, HUB);
    const b = await connectMcp(server, HUB);
    const other = await connectMcp(server, HUB);
    const ws = await WsClient.open(server);
    try {
      const ha = await register(a, { name: "a", session: "live" });
      const hb = await register(b, { name: "b", session: "live" });
      const ho = await register(other, { name: "a", session: "live-other" });
      const old = await call(a, "corral_send", { handle: ha, to: "b", text: "before" });
      const oldId = Number(/#(\d+)/.exec(old)?.[1]);
      await call(a, "corral_send", { handle: ha, to: "b", text: "also before" });
      ws.send({ type: "subscribe_conversation", session: "live", cursor: oldId });
      await ws.waitFor("conversation_message", (m) => m.message.text === "also before");
      await ws.waitFor("conversation_agents", (m) => m.agents.some((x) => x.name === "b" && x.online));
      await call(b, "corral_send", { handle: hb, to: "a", text: "live one" });
      await register(other, { name: "z", session: "live-other" });
      await call(other, "corral_send", { handle: ho, to: "z", text: "elsewhere" });
      await ws.waitFor("conversation_message", (m) => m.message.text === "live one");
      // b moves to another name with its handle: b goes offline.
      await register(b, { name: "b2", session: "live", handle: hb });
      await ws.waitFor("conversation_agents", (m) => m.agents.some((x) => x.name === "b" && !x.online));
      const texts = ws.of("conversation_message").map((m) => m.message.text);
      expect(texts).toEqual(["also before", "live one"]);
    } finally {
      await ws.close();
      await Promise.all([a.close(), b.close(), other.close()]);
    }
  });
});
