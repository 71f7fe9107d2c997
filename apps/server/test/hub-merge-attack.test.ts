// Attacks on three features merged together: presence (CORRAL_HUB_PRESENCE_S) against the handle's
// lease, live targets (a registration's own OpenCode server) and agents limited to hub sessions,
// plus the panel's `?token=` exchange. Each principal is untrusted: a client with the token in
// another hub session, one with an old handle, a local process that takes a port a window used.
import { createServer, type IncomingHttpHeaders, request } from "node:http";
import type { HubAgentList } from "@corral/shared";
import { type CallToolResult, Client, type Notification, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { type FakeOpencode, startFakeOpencode } from "./fixtures/fake-opencode.js";
import { type Listening, listenOn } from "./fixtures/loopback.js";
import { api, sleep, startServer, type TestServer, until } from "./helpers.js";
import { TEST_MCP_ERA, textOf } from "./mcp-client.js";
import { withRegistryOf } from "./registry-of.js";

const HUB = "/mcp?toolsets=hub";
const PRESENCE_S = 2;
const PASSWORD = "window-secret-attack";
const basic = (password: string) => `Basic ${Buffer.from(`opencode:${password}`).toString("base64")}`;

interface Connected {
  client: Client;
  events: Notification[];
}

async function connect(server: TestServer, channel = false): Promise<Connected> {
  const client = new Client(
    { name: "attack-test", version: "1.0.0" },
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

async function windowSession(fake: FakeOpencode): Promise<string> {
  const res = await fetch(`${fake.url}/session`, {
    method: "POST",
    headers: { authorization: basic(PASSWORD), "content-type": "application/json" },
    body: JSON.stringify({ title: "the window's conversation" }),
  });
  return ((await res.json()) as { id: string }).id;
}

/** A local process that took the port a window used: it answers as OpenCode does, and records every request. */
interface Squatter extends Listening {
  requests: { method: string; path: string; headers: IncomingHttpHeaders; body: string }[];
}

async function squat(port: number): Promise<Squatter> {
  const requests: Squatter["requests"] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString();
    });
    req.on("end", () => {
      requests.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body });
      if (req.url?.startsWith("/global/health")) {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ healthy: true, version: "1.18.33" }));
      } else if (req.url?.startsWith("/event")) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(`data: ${JSON.stringify({ id: "evt_000000000001aaaaaaaaaaaaaa", type: "server.connected", properties: {} })}\n\n`);
      } else if (req.url?.startsWith("/session")) {
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify(req.method === "GET" && req.url === "/session" ? [] : { id: "ses_x", directory: "/tmp", title: "t" }));
      } else res.writeHead(204).end();
    });
  });
  const listening = await listenOn(server, "127.0.0.1", port);
  return { ...listening, requests };
}

describe(`hub merge attacks (${TEST_MCP_ERA})`, () => {
  let server: TestServer;
  const open: Client[] = [];
  const fakes: FakeOpencode[] = [];
  const squatters: Squatter[] = [];
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
    await Promise.all(fakes.splice(0).map((f) => f.close()));
    await Promise.all(squatters.splice(0).map((s) => s.close()));
  });
  afterAll(() => server.close());

  /** A window registered live, then gone (its MCP client and its server closed) and offline; a squatter on its port. */
  async function windowGone(session: string, name: string) {
    const oc = await startFakeOpencode({ password: PASSWORD });
    fakes.push(oc);
    const port = Number(new URL(oc.url).port);
    const win = await connect(server);
    const handle = await register(win.client, { name, session, server: { port, session: await windowSession(oc), password: PASSWORD } });
    await win.client.close();
    await oc.close();
    fakes.splice(fakes.indexOf(oc), 1);
    await until(async () => ((await isOnline(server, session, name)) === false ? true : undefined), 20_000, `${name} offline`);
    const squatter = await squat(port);
    squatters.push(squatter);
    return { handle, squatter, port };
  }

  test("a window gone offline: a message to it waits in its inbox, and the process now on its port hears nothing", async () => {
    const { squatter } = await windowGone("gone", "oc");
    const alice = (await connectKept()).client;
    const a = await register(alice, { name: "alice", session: "gone" });
    expect(await call(alice, "corral_send", { handle: a, to: "oc", text: "secret plan" })).toMatch(/^sent #\d+ to oc$/);
    expect(await call(alice, "corral_agents", { session: "gone" })).not.toContain("live at");
    await sleep(300);
    expect(squatter.requests).toEqual([]);
  });

  test("the gone window's old handle coming back (a resumed conversation) does not revive its old address: the squatter never gets the password", async () => {
    const { handle, squatter } = await windowGone("revive", "oc");
    const alice = (await connectKept()).client;
    const a = await register(alice, { name: "alice", session: "revive" });
    // The old handle calls again from a new client: online again, its inbox intact...
    const back = (await connectKept()).client;
    expect(await call(back, "corral_receive", { handle, timeout_s: 0 })).toBe("no message after 0 s");
    expect(await isOnline(server, "revive", "oc")).toBe(true);
    // ...but the address it registered was that of a window that went away: no longer live.
    expect(await call(alice, "corral_agents", { session: "revive" })).not.toContain("live at");
    expect(await call(alice, "corral_send", { handle: a, to: "oc", text: "the deploy key is in vault/7" })).toMatch(/^sent #\d+ to oc$/);
    await sleep(500);
    expect(squatter.requests).toEqual([]);
    expect(await call(back, "corral_receive", { handle, timeout_s: 0 })).toContain("the deploy key is in vault/7");
    const row = await withRegistryOf(server.dataDir, (registry) => registry.conversations.agent("revive", "oc"));
    expect(row).toMatchObject({ targetUrl: null, targetSession: null, targetPassword: null });
  });

  test("a lapsed live name taken by a new registration without a server: the old target and password are gone from the row; nothing reaches the port", async () => {
    const { handle, squatter } = await windowGone("takeover", "oc");
    const mallory = (await connectKept()).client;
    const m = await register(mallory, { name: "oc", session: "takeover" });
    const row = await withRegistryOf(server.dataDir, (registry) => registry.conversations.agent("takeover", "oc"));
    expect(row).toMatchObject({ targetUrl: null, targetSession: null, targetPassword: null });
    const alice = (await connectKept()).client;
    const a = await register(alice, { name: "alice", session: "takeover" });
    expect(await call(alice, "corral_send", { handle: a, to: "oc", text: "hello" })).toMatch(/^sent #\d+ to oc$/);
    expect(await call(mallory, "corral_receive", { handle: m, timeout_s: 0 })).toContain("hello");
    // The old handle is over; it cannot bring the old address back either.
    expect(await call(mallory, "corral_receive", { handle, timeout_s: 0 })).toMatch(/^error: handle: no live registration/);
    await sleep(300);
    expect(squatter.requests).toEqual([]);
  });

  test("a client of another hub session can neither see nor reach a live target by name, nor take over its name", async () => {
    const oc = await startFakeOpencode({ password: PASSWORD });
    fakes.push(oc);
    const win = (await connectKept()).client;
    await register(win, {
      name: "oc",
      session: "mine",
      server: { port: Number(new URL(oc.url).port), password: PASSWORD, session: await windowSession(oc) },
    });
    const eve = (await connectKept()).client;
    const e = await register(eve, { name: "eve", session: "theirs" });
    expect(await call(eve, "corral_agents", { session: "theirs" })).not.toContain("oc (client)");
    expect(await call(eve, "corral_send", { handle: e, to: "oc", text: "hi" })).toMatch(/^error: to: no agent named oc in session theirs/);
    // The same name in eve's session is eve's own: registering it there touches nothing of mine.
    await register(eve, { name: "oc", session: "theirs" });
    expect((await clientsOf(server, "mine")).find((c) => c.name === "oc")?.liveAt).toBe(oc.url);
    expect(oc.requests.filter((r) => r.path.includes("/prompt_async"))).toHaveLength(0);
  });

  test.skipIf(TEST_MCP_ERA === "modern")(
    "a live-target registration that asked for pushes: a message goes into its server, never also onto its stream",
    async () => {
      const oc = await startFakeOpencode({ password: PASSWORD });
      fakes.push(oc);
      const win = await connectKept(true);
      await register(win.client, {
        name: "oc",
        session: "pushlive",
        push: true,
        server: { port: Number(new URL(oc.url).port), password: PASSWORD, session: await windowSession(oc) },
      });
      const bob = (await connectKept()).client;
      const b = await register(bob, { name: "bob", session: "pushlive" });
      expect(await call(bob, "corral_send", { handle: b, to: "oc", text: "live only" })).toContain("went into oc's running session");
      expect(await call(bob, "corral_receive", { handle: b, timeout_s: 30 })).toContain("live only");
      expect(win.events.filter((e) => e.method === "notifications/claude/channel")).toEqual([]);
    },
  );

  test.skipIf(TEST_MCP_ERA === "modern")(
    "a push client of another session hears nothing of this one, and a job launched elsewhere never ends on its stream",
    async () => {
      const spy = await connectKept(true);
      await register(spy.client, { name: "oc", session: "spy", push: true });
      const alice = (await connectKept()).client;
      const a = await register(alice, { name: "alice", session: "real" });
      await register((await connectKept()).client, { name: "oc", session: "real" });
      await call(alice, "corral_send", { handle: a, to: "oc", text: "for the real oc only" });
      const run = await call(alice, "gemini_run_async", { prompt: "hello", workdir: server.root }).catch(() => "");
      await sleep(1500);
      expect(JSON.stringify(spy.events)).not.toContain("for the real oc only");
      if (run) expect(JSON.stringify(spy.events)).not.toContain(run.trim());
    },
  );

  test("the ?token= exchange answers only with a path on this origin, whatever the page path", async () => {
    const locationOf = (path: string) =>
      new Promise<{ status: number; location: string | undefined }>((resolve, reject) => {
        const url = new URL(server.url);
        const req = request({ host: url.hostname, port: url.port, path, method: "GET", headers: { host: url.host } }, (res) => {
          res.resume();
          resolve({ status: res.statusCode ?? 0, location: res.headers.location });
        });
        req.on("error", reject);
        req.end();
      });
    for (const path of ["//evil.example/x", "/\\evil.example/x", "/%2F%2Fevil.example", "///evil.example", "/\\/evil.example"]) {
      const { status, location } = await locationOf(`${path}?token=${server.token}&next=//evil.example`);
      if (status !== 302) continue;
      expect(location, path).toMatch(/^\/(?![/\\])/);
      expect(location, path).not.toContain("token=");
      expect(new URL(location ?? "", server.url).origin).toBe(new URL(server.url).origin);
    }
  });
});

/** A 2025-11-25 session spoken over raw HTTP, so that its GET stream alone can be closed and opened again. */
async function rawSession(server: TestServer) {
  const url = `${server.url}${HUB}`;
  const base = { ...server.auth, "content-type": "application/json", accept: "application/json, text/event-stream" };
  let id = "";
  const post = async (body: unknown) => {
    const res = await fetch(url, {
      method: "POST",
      headers: { ...base, ...(id ? { "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" } : {}) },
      body: JSON.stringify(body),
    });
    id ||= res.headers.get("mcp-session-id") ?? "";
    return res.text();
  };
  await post({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
  });
  await post({ jsonrpc: "2.0", method: "notifications/initialized" });
  let stream: AbortController | undefined;
  return {
    call: (name: string, args: Record<string, unknown>) => post({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name, arguments: args } }),
    async openStream() {
      stream = new AbortController();
      const res = await fetch(url, {
        headers: { ...server.auth, accept: "text/event-stream", "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" },
        signal: stream.signal,
      });
      expect(res.status).toBe(200);
      res.body?.pipeTo(new WritableStream()).catch(() => undefined);
    },
    closeStream: () => stream?.abort(),
  };
}

describe(`a window's stream that drops and comes back (legacy)`, () => {
  test("offline while it is closed, online and still live once the same session's stream is back", async () => {
    const server = await startServer({ CORRAL_HUB_PRESENCE_S: String(PRESENCE_S) });
    const oc = await startFakeOpencode({ password: PASSWORD });
    try {
      const raw = await rawSession(server);
      await raw.openStream();
      const port = Number(new URL(oc.url).port);
      expect(
        await raw.call("corral_register", { name: "oc", session: "flap", server: { port, password: PASSWORD, session: await windowSession(oc) } }),
      ).toContain("handle: ");
      raw.closeStream();
      await until(async () => ((await isOnline(server, "flap", "oc")) === false ? true : undefined), 5_000, "oc offline");
      await raw.openStream();
      await until(async () => ((await isOnline(server, "flap", "oc")) === true ? true : undefined), 5_000, "oc online again");
      expect((await clientsOf(server, "flap")).find((c) => c.name === "oc")?.liveAt).toBe(oc.url);
      raw.closeStream();
    } finally {
      await oc.close();
      await server.close();
    }
  });
});

describe(`a window that goes away, with the default presence (${TEST_MCP_ERA})`, () => {
  test.skipIf(TEST_MCP_ERA === "modern")(
    "its stream closing takes it offline at once: a message sent right after never reaches the process that took its port",
    async () => {
      const server = await startServer();
      const oc = await startFakeOpencode({ password: PASSWORD });
      const win = await connect(server);
      const alice = await connect(server);
      let squatter: Squatter | undefined;
      try {
        const port = Number(new URL(oc.url).port);
        await register(win.client, { name: "oc", session: "s", server: { port, session: await windowSession(oc), password: PASSWORD } });
        const a = await register(alice.client, { name: "alice", session: "s" });
        expect(await isOnline(server, "s", "oc")).toBe(true);
        await win.client.close();
        await oc.close();
        await until(async () => ((await isOnline(server, "s", "oc")) === false ? true : undefined), 5_000, "oc offline");
        squatter = await squat(port);
        expect(await call(alice.client, "corral_send", { handle: a, to: "oc", text: "for the window only" })).toMatch(/^sent #\d+ to oc$/);
        await sleep(500);
        expect(squatter.requests).toEqual([]);
      } finally {
        await alice.client.close();
        await squatter?.close();
        await server.close();
      }
    },
  );
});
