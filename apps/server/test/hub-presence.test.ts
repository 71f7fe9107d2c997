// Presence that is true (a registration is online while its client is reachable) and messages
// pushed into a client that takes Claude Code channel events, with the official SDK client in the
// era CORRAL_TEST_MCP_ERA picks. Clients "go away" as Claude Code does when it exits: the socket
// closes, and no DELETE ends the MCP session.
import type { HubAgentList } from "@corral/shared";
import { type CallToolResult, Client, type Notification, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { api, sleep, startServer, type TestServer, until } from "./helpers.js";
import { TEST_MCP_ERA, textOf } from "./mcp-client.js";

const HUB = "/mcp?toolsets=hub";
/** CORRAL_HUB_PRESENCE_S in these tests: short, so a client that went away shows offline soon. */
const PRESENCE_S = 2;

const legacy = TEST_MCP_ERA === "legacy";

interface Connected {
  client: Client;
  /** Notifications the server sent that the SDK has no handler of its own for (channel events). */
  events: Notification[];
}

/** The official SDK client over real HTTP; `channel`: it declares Claude Code's channel capability as a client. */
async function connect(server: TestServer, channel = false): Promise<Connected> {
  const client = new Client(
    { name: "presence-test", version: "1.0.0" },
    {
      ...(TEST_MCP_ERA === "modern" ? { versionNegotiation: { mode: { pin: "2026-07-28" as const } } } : {}),
      ...(channel ? { capabilities: { experimental: { "claude/channel": {} } } } : {}),
    },
  );
  const events: Notification[] = [];
  client.fallbackNotificationHandler = async (notification) => {
    events.push(notification);
  };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}${HUB}`), { requestInit: { headers: server.auth } }));
  return { client, events };
}

const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  textOf((await client.callTool({ name, arguments: args })) as CallToolResult);

async function register(client: Client, args: Record<string, unknown>): Promise<string> {
  const text = await call(client, "corral_register", args);
  const handle = /^handle: ([A-Za-z0-9_-]+)$/m.exec(text)?.[1];
  if (!handle) throw new Error(`no handle in: ${text}`);
  return handle;
}

const clientsOf = async (server: TestServer, session: string) =>
  (await api<HubAgentList>(server, "GET", `/api/conversations/${session}/agents`)).body.agents.filter((a) => a.kind === "client");

const isOnline = async (server: TestServer, session: string, name: string) => (await clientsOf(server, session)).find((a) => a.name === name)?.online;

const TAKEN_OVER =
  /^error: handle: no live registration has this handle: .*another registration took its name while it was offline.*; register again with corral_register/;

/** A channel event's content and attributes, as Claude Code shows them: `<channel source="corral" …attributes>content</channel>`. */
const channelEvents = (events: Notification[]) =>
  events.filter((e) => e.method === "notifications/claude/channel").map((e) => e.params as { content: string; meta: Record<string, string> });

describe(`presence (${TEST_MCP_ERA})`, () => {
  let server: TestServer;
  const open: Client[] = [];
  const connectKept = async (channel = false) => {
    const connected = await connect(server, channel);
    open.push(connected.client);
    return connected;
  };
  beforeAll(async () => {
    server = await startServer({ CORRAL_HUB_PRESENCE_S: String(PRESENCE_S) });
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close()));
  });
  afterAll(() => server.close());

  test("a client that goes away (socket closed, no DELETE) shows offline within the presence; a new client takes its name at once and the old handle is told to register again", async () => {
    const first = await connect(server);
    const old = await register(first.client, { name: "win", session: "window" });
    if (legacy) {
      // Its session's GET stream stays open: no call for twice the presence, and it is still online.
      await sleep(2 * PRESENCE_S * 1000);
      expect(await isOnline(server, "window", "win")).toBe(true);
    }
    const other = (await connectKept()).client;
    expect(await call(other, "corral_register", { name: "win", session: "window" })).toMatch(/^error: name: the name win is taken/);

    await first.client.close();
    await until(async () => ((await isOnline(server, "window", "win")) === false ? true : undefined), 20_000, "win offline");
    const listed = await call(other, "corral_agents", { session: "window" });
    expect(listed).toMatch(/^win \(client\) · offline · last seen \d+ s ago \(.+Z\)$/m);

    const restarted = (await connectKept()).client;
    const again = await register(restarted, { name: "win", session: "window" });
    expect(await isOnline(server, "window", "win")).toBe(true);
    // The window that went away comes back with its old handle: its name was taken, so it registers again.
    expect(await call(restarted, "corral_receive", { handle: old, timeout_s: 0 })).toMatch(TAKEN_OVER);
    expect(await call(restarted, "corral_receive", { handle: again, timeout_s: 0 })).toBe("no message after 0 s");
  });

  test("an inbox poller keeps its handle across a lapse: offline between polls, online again with its next call, its inbox intact", async () => {
    const poller = await connect(server);
    const handle = await register(poller.client, { name: "poller", session: "polls" });
    await poller.client.close();
    const sender = (await connectKept()).client;
    const from = await register(sender, { name: "sender", session: "polls" });
    await until(async () => ((await isOnline(server, "polls", "poller")) === false ? true : undefined), 20_000, "poller offline");
    expect(await call(sender, "corral_send", { handle: from, to: "poller", text: "while you were away" })).toMatch(/^sent/);

    // The next poll, from a new connection (or a 2026-07-28 request) with the same handle.
    const back = (await connectKept()).client;
    const received = await call(back, "corral_receive", { handle, timeout_s: 0 });
    expect(received).toContain("while you were away");
    expect(await isOnline(server, "polls", "poller")).toBe(true);
  });

  test("a receive in progress holds its registration online past the presence", async () => {
    const { client } = await connectKept();
    const handle = await register(client, { name: "waiter", session: "waits" });
    const waiting = call(client, "corral_receive", { handle, timeout_s: 3 * PRESENCE_S });
    await sleep(2 * PRESENCE_S * 1000);
    expect(await isOnline(server, "waits", "waiter")).toBe(true);
    expect(await waiting).toBe(`no message after ${3 * PRESENCE_S} s`);
  });

  test.runIf(legacy)(
    "a session whose stream holds a registration is not closed as idle (CORRAL_MCP_SESSION_IDLE_S); the registration stays online",
    async () => {
      const idle = await startServer({ CORRAL_HUB_PRESENCE_S: String(PRESENCE_S), CORRAL_MCP_SESSION_IDLE_S: "1" });
      const { client } = await connect(idle);
      try {
        const handle = await register(client, { name: "quiet", session: "idle" });
        // Past the idle time and twice the presence without a call.
        await sleep(2 * PRESENCE_S * 1000 + 1000);
        expect(await isOnline(idle, "idle", "quiet")).toBe(true);
        expect(await call(client, "corral_receive", { handle, timeout_s: 0 })).toBe("no message after 0 s");
      } finally {
        await client.close();
        await idle.close();
      }
    },
  );

  test.runIf(legacy)("new sessions past CORRAL_MCP_MAX_SESSIONS push out idle sessions holding no registration first", async () => {
    const full = await startServer({ CORRAL_HUB_PRESENCE_S: String(PRESENCE_S), CORRAL_MCP_MAX_SESSIONS: "3" });
    const clients: Client[] = [];
    try {
      const owner = (await connect(full)).client;
      clients.push(owner);
      const handle = await register(owner, { name: "held", session: "full" });
      // The owner's session is now the least recently used; three more sessions each need a place.
      for (let i = 0; i < 3; i++) clients.push((await connect(full)).client);
      expect(await call(owner, "corral_read", { handle, agent: "held" })).toMatch(/^no messages of held/);
      expect(await isOnline(full, "full", "held")).toBe(true);
    } finally {
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
      await full.close();
    }
  });

  test("presence never outlasts the handle: CORRAL_HUB_PRESENCE_S is capped by CORRAL_HUB_LEASE_S", async () => {
    const capped = await startServer({ CORRAL_HUB_PRESENCE_S: "600", CORRAL_HUB_LEASE_S: "1" });
    try {
      expect(capped.services.config.hubPresenceMs).toBe(1000);
    } finally {
      await capped.close();
    }
  });
});

describe(`pushed into Claude Code (${TEST_MCP_ERA})`, () => {
  let server: TestServer;
  const open: Client[] = [];
  const connectKept = async (channel = false) => {
    const connected = await connect(server, channel);
    open.push(connected.client);
    return connected;
  };
  beforeAll(async () => {
    server = await startServer({ CORRAL_HUB_PRESENCE_S: String(PRESENCE_S) });
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close()));
  });
  afterAll(() => server.close());

  test.runIf(legacy)("a client declaring claude/channel receives a message as a notification with no call; the message is received", async () => {
    const claude = await connectKept(true);
    expect(claude.client.getServerCapabilities()?.experimental?.["claude/channel"]).toEqual({});
    const handle = await register(claude.client, { name: "cc", session: "push", label: "pushed" });
    const peer = (await connectKept()).client;
    const from = await register(peer, { name: "peer", session: "push" });
    const sent = await call(peer, "corral_send", { handle: from, to: "cc", text: "review parser.ts <now>" });
    const id = /^sent #(\d+)/.exec(sent)?.[1];

    const [event] = await until(() => {
      const got = channelEvents(claude.events);
      return got.length ? got : undefined;
    });
    expect(event).toEqual({
      content: "review parser.ts <now>",
      meta: { kind: "message", session: "push", from: "peer", to: "cc", message_id: id },
    });
    // Written on the stream, so marked received: a receive finds nothing more.
    expect(await call(claude.client, "corral_receive", { handle, timeout_s: 0 })).toBe("no message after 0 s");
  });

  test.runIf(legacy)("the end of a job the client launched without waiting is pushed too; a _run it waited for is not", async () => {
    const claude = await connectKept(true);
    await register(claude.client, { name: "lead", session: "jobs" });
    const waited = /job (\w+)/.exec(await call(claude.client, "kiro_run", { prompt: "answered in the call" }))?.[1];
    expect(waited).toBeTruthy();
    const jobId = await call(claude.client, "kiro_run_async", { prompt: "job for the channel" });
    const ended = await until(() => channelEvents(claude.events).find((e) => e.meta.kind === "job_end"));
    expect(ended.meta).toMatchObject({ job_id: jobId, agent: "kiro", status: "succeeded" });
    expect(ended.content).toContain(`${jobId} · kiro · listo`);
    // The _run ended before the async job started: had its end been pushed, it would have come first.
    expect(channelEvents(claude.events).map((e) => e.meta.job_id)).toEqual([jobId]);
  });

  test.runIf(legacy)("push: true at registration asks for pushes from a client that declares nothing (Claude Code as it is)", async () => {
    const claude = await connectKept(false);
    const text = await call(claude.client, "corral_register", { name: "cc", session: "optin", push: true });
    expect(text).toMatch(/come as channel events/);
    const peer = (await connectKept()).client;
    const from = await register(peer, { name: "peer", session: "optin" });
    await call(peer, "corral_send", { handle: from, to: "cc", text: "pushed without a capability" });
    const [event] = await until(() => {
      const got = channelEvents(claude.events);
      return got.length ? got : undefined;
    });
    expect(event?.content).toBe("pushed without a capability");
  });

  test.runIf(legacy)(
    "a push client hears only its own registration: the same name in another hub session, or another name, pushes nothing to it",
    async () => {
      const claude = await connectKept(true);
      await register(claude.client, { name: "same", session: "mine" });
      const peer = (await connectKept()).client;
      await register(peer, { name: "same", session: "theirs" });
      const from = await register(peer, { name: "sender", session: "theirs" });
      const mineFrom = await register(peer, { name: "sender", session: "mine" });
      await register(peer, { name: "other", session: "mine" });
      await call(peer, "corral_send", { handle: from, to: "same", text: "for theirs" });
      await call(peer, "corral_send", { handle: mineFrom, to: "other", text: "for other" });
      await call(peer, "corral_send", { handle: mineFrom, to: "same", text: "for mine" });
      // Stored in this order: had either of the first two been pushed, it would have come first.
      const [event] = await until(() => {
        const got = channelEvents(claude.events);
        return got.length ? got : undefined;
      });
      expect(channelEvents(claude.events).map((e) => e.content)).toEqual(["for mine"]);
      expect(event?.meta).toMatchObject({ session: "mine", to: "same" });
    },
  );

  test("a client that neither declares the capability nor asks for pushes gets nothing pushed; corral_receive takes its messages", async () => {
    const plain = await connectKept(false);
    const handle = await register(plain.client, { name: "plain", session: "plain" });
    const peer = (await connectKept()).client;
    const from = await register(peer, { name: "peer", session: "plain" });
    await call(peer, "corral_send", { handle: from, to: "plain", text: "take me" });
    expect(await call(plain.client, "corral_receive", { handle, timeout_s: 10 })).toContain("take me");
    expect(channelEvents(plain.events)).toEqual([]);
  });

  test("nothing is lost: a message to a push client that went away stays in its inbox, and reaches its next stream or receive", async () => {
    const claude = await connect(server, true);
    const handle = await register(claude.client, { name: "away", session: "lost" });
    await claude.client.close();
    const peer = (await connectKept()).client;
    const from = await register(peer, { name: "peer", session: "lost" });
    await until(async () => ((await isOnline(server, "lost", "away")) === false ? true : undefined), 20_000, "away offline");
    await call(peer, "corral_send", { handle: from, to: "away", text: "kept for later" });

    const back = await connectKept(true);
    if (legacy) {
      // Its next call with the handle ties it to the new session: what waits is pushed on that stream.
      expect(await call(back.client, "corral_read", { handle, agent: "peer" })).toContain("kept for later");
      const [event] = await until(() => {
        const got = channelEvents(back.events);
        return got.length ? got : undefined;
      });
      expect(event?.content).toBe("kept for later");
      expect(await call(back.client, "corral_receive", { handle, timeout_s: 0 })).toBe("no message after 0 s");
    } else {
      expect(await call(back.client, "corral_receive", { handle, timeout_s: 0 })).toContain("kept for later");
    }
  });

  test.runIf(!legacy)("a 2026-07-28 client has no session stream: push is refused in words and corral_receive stays the way", async () => {
    const { client } = await connectKept(true);
    expect(client.getServerCapabilities()?.experimental?.["claude/channel"]).toBeUndefined();
    expect(await call(client, "corral_register", { name: "modern", session: "modern", push: true })).toMatch(
      /push: this request has no MCP session \(2026-07-28\), so nothing can be pushed; take messages with corral_receive/,
    );
  });
});
