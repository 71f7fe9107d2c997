// Live targets: an OpenCode window registers itself with its own server (corral_register's
// `server`, the REST register's too), and a message to it is posted into its running session
// (a fake `opencode serve`, fixtures/fake-opencode.ts, speaking OpenCode 1.18.33's HTTP API),
// its answer coming back as a message. Checked reachable at registration; updated when the name
// registers again from a new port; gone when the registration ends; its password never shown.
import { createServer } from "node:http";
import type { HubAgentList, HubMessage, HubRegistration, HubSessionList } from "@corral/shared";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { type FakeOpencode, startFakeOpencode } from "./fixtures/fake-opencode.js";
import { listenOnLoopback } from "./fixtures/loopback.js";
import { api, startServer, type TestServer, until } from "./helpers.js";
import { connectMcp, textOf } from "./mcp-client.js";
import { withRegistryOf } from "./registry-of.js";

const HUB = "/mcp?toolsets=hub";
const PASSWORD = "window-secret-7f3a";
const basic = (password: string) => `Basic ${Buffer.from(`opencode:${password}`).toString("base64")}`;

const call = async (client: Client, name: string, args: Record<string, unknown> = {}) => textOf(await client.callTool({ name, arguments: args }));

async function register(client: Client, args: Record<string, unknown>): Promise<string> {
  const text = await call(client, "corral_register", args);
  const handle = /^handle: ([A-Za-z0-9_-]+)$/m.exec(text)?.[1];
  if (!handle) throw new Error(`no handle in: ${text}`);
  return handle;
}

/** corral_register's answer as text, a schema refusal included. */
const registerText = async (c: Client, args: Record<string, unknown>) => textOf(await c.callTool({ name: "corral_register", arguments: args }));

const portOf = (fake: FakeOpencode) => Number(new URL(fake.url).port);

/** A session of the fake as the window's own: made over its API, as the TUI makes one. */
async function windowSession(fake: FakeOpencode, password = PASSWORD): Promise<string> {
  const res = await fetch(`${fake.url}/session`, {
    method: "POST",
    headers: { authorization: basic(password), "content-type": "application/json" },
    body: JSON.stringify({ title: "the window's conversation" }),
  });
  return ((await res.json()) as { id: string }).id;
}

/** The window's model at work: a prompt whose tool step the fake holds until finishTools(). */
async function busy(fake: FakeOpencode, session: string): Promise<void> {
  const res = await fetch(`${fake.url}/session/${session}/prompt_async`, {
    method: "POST",
    headers: { authorization: basic(PASSWORD), "content-type": "application/json" },
    body: JSON.stringify({ parts: [{ type: "text", text: "run the tool" }] }),
  });
  expect(res.status).toBe(204);
  await until(() => (fake.holding() ? true : undefined));
}

const prompts = (fake: FakeOpencode) => fake.requests.filter((r) => r.path.includes("/prompt_async"));

/** A port nothing listens on: one the system gave and took back. */
async function closedPort(): Promise<number> {
  const listening = await listenOnLoopback(createServer());
  const port = Number(new URL(listening.url).port);
  await listening.close();
  return port;
}

describe("live targets", () => {
  let server: TestServer;
  const clients: Client[] = [];
  const fakes: FakeOpencode[] = [];
  const open = async () => {
    const client = await connectMcp(server, HUB);
    clients.push(client);
    return client;
  };
  const fake = async (password: string | null = PASSWORD) => {
    const started = await startFakeOpencode(password === null ? {} : { password });
    fakes.push(started);
    return started;
  };
  beforeAll(async () => {
    server = await startServer();
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await Promise.all(fakes.splice(0).map((f) => f.close()));
  });
  afterAll(() => server.close());

  test("an OpenCode window registers with its port in review; a message lands in its running turn and the answer comes back as a message", async () => {
    const oc = await fake();
    const session = await windowSession(oc);
    const windowClient = await open();
    const alice = await open();
    const registered = await call(windowClient, "corral_register", {
      name: "opencode-win",
      session: "review",
      label: "the OpenCode window",
      server: { port: portOf(oc), session, password: PASSWORD },
    });
    expect(registered).toContain(`Messages to you are posted into session ${session} of ${oc.url}`);
    const w = /handle: (\S+)/.exec(registered)?.[1] ?? "";
    const a = await register(alice, { name: "alice", session: "review" });

    const listed = await call(alice, "corral_agents", { session: "review" });
    const line = listed.split("\n").find((l) => l.startsWith("opencode-win (client) · online · last seen "));
    expect(line).toContain(` · live at ${oc.url} · the OpenCode window`);

    await busy(oc, session);
    expect(await call(alice, "corral_send", { handle: a, to: "opencode-win", text: "please review parser.ts" })).toMatch(
      /^sent #\d+ to opencode-win; it went into opencode-win's running session, its answer comes to you as a message \(corral_receive\)$/,
    );
    await until(() => (prompts(oc).length === 2 ? true : undefined));
    const posted = prompts(oc)[1];
    expect(posted?.headers.authorization).toBe(basic(PASSWORD));
    expect(JSON.stringify(posted?.body)).toContain("a message from alice in session review");
    oc.finishTools();

    const answer = await call(alice, "corral_receive", { handle: a, timeout_s: 30 });
    expect(answer).toMatch(/^1 message\(s\)\n--- #\d+ from opencode-win to alice/);
    // One loop answered both: the window's own prompt, then alice's message.
    expect(answer).toContain(
      "heard: run the tool | [Corral: a message from alice in session review; your reply is sent back to alice]\n\nplease review parser.ts",
    );
    // The session's history holds the exchange as sent (without the framing), and never the password.
    const history = await api<{ messages: HubMessage[] }>(server, "GET", "/api/conversations/review/messages?agent=opencode-win");
    expect(history.body.messages.map((m) => [m.from, m.to])).toEqual([
      ["alice", "opencode-win"],
      ["opencode-win", "alice"],
    ]);
    expect(history.body.messages[0]?.text).toBe("please review parser.ts");
    expect(JSON.stringify(history.body)).not.toContain(PASSWORD);
    // Nothing waited in the window's inbox: the message went into its session instead.
    expect(await call(windowClient, "corral_receive", { handle: w, timeout_s: 0 })).toBe("no message after 0 s");
  });

  test("one message at a time per sender: a second while the window has not answered the first is refused naming to", async () => {
    const oc = await fake();
    const session = await windowSession(oc);
    const windowClient = await open();
    const dan = await open();
    await register(windowClient, { name: "oc", session: "one-at-a-time", server: { port: portOf(oc), session, password: PASSWORD } });
    const d = await register(dan, { name: "dan", session: "one-at-a-time" });
    await busy(oc, session);
    expect(await call(dan, "corral_send", { handle: d, to: "oc", text: "first" })).toMatch(/^sent #\d+ to oc; it went into/);
    expect(await call(dan, "corral_send", { handle: d, to: "oc", text: "second" })).toMatch(
      /^error: to: oc is still answering your previous message \(#\d+\); receive its answer first \(corral_receive\), then send again$/,
    );
    oc.finishTools();
    expect(await call(dan, "corral_receive", { handle: d, timeout_s: 30 })).toContain("first");
    expect(await call(dan, "corral_send", { handle: d, to: "oc", text: "third" })).toMatch(/^sent #\d+ to oc; it went into/);
    expect(await call(dan, "corral_receive", { handle: d, timeout_s: 30 })).toContain("third");
  });

  test("without a session, the message goes into the server's latest session", async () => {
    const oc = await fake(null);
    await windowSession(oc);
    const latest = await windowSession(oc);
    const windowClient = await open();
    const bob = await open();
    await register(windowClient, { name: "oc", session: "latest", server: { url: `${oc.url}/` } });
    const b = await register(bob, { name: "bob", session: "latest" });
    await call(bob, "corral_send", { handle: b, to: "oc", text: "which session?" });
    expect(await call(bob, "corral_receive", { handle: b, timeout_s: 30 })).toContain("heard: [Corral: a message from bob");
    expect(prompts(oc)[0]?.path).toContain(`/session/${latest}/prompt_async`);
  });

  test("registering again with the handle from a new port moves the target; leaving ends it and messages wait in the inbox", async () => {
    const first = await fake();
    const second = await fake();
    const windowClient = await open();
    const carol = await open();
    const w1 = await register(windowClient, {
      name: "oc",
      session: "moves",
      server: { port: portOf(first), password: PASSWORD, session: await windowSession(first) },
    });
    // Another client cannot take the name or its target: the name is taken without the handle.
    expect(await call(carol, "corral_register", { name: "oc", session: "moves", server: { port: portOf(second), password: PASSWORD } })).toMatch(
      /^error: name: the name oc is taken in session moves/,
    );
    const w2 = await register(windowClient, {
      name: "oc",
      session: "moves",
      handle: w1,
      server: { port: portOf(second), password: PASSWORD, session: await windowSession(second) },
    });
    expect(await call(carol, "corral_agents", { session: "moves" })).toContain(`live at ${second.url}`);
    const c = await register(carol, { name: "carol", session: "moves" });
    await call(carol, "corral_send", { handle: c, to: "oc", text: "after the move" });
    expect(await call(carol, "corral_receive", { handle: c, timeout_s: 30 })).toContain("after the move");
    expect(prompts(first)).toHaveLength(0);
    expect(prompts(second)).toHaveLength(1);

    // Left: the row keeps no address and no password, and a message waits in the inbox.
    const left = await api(server, "POST", "/api/conversations/moves/leave", { key: w2 });
    expect(left.status).toBe(204);
    const row = await withRegistryOf(server.dataDir, (registry) => registry.conversations.agent("moves", "oc"));
    expect(row).toMatchObject({ targetUrl: null, targetSession: null, targetPassword: null });
    expect(await call(carol, "corral_send", { handle: c, to: "oc", text: "are you there?" })).toMatch(/^sent #\d+ to oc$/);
    expect(prompts(second)).toHaveLength(1);
  });

  test("the REST register takes the same server and key, and answers where it is live", async () => {
    const oc = await fake();
    const res = await api<HubRegistration>(server, "POST", "/api/conversations/rest/agents", {
      name: "oc",
      server: { port: portOf(oc), password: PASSWORD },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.agent.liveAt).toBe(oc.url);
    const moved = await fake();
    const again = await api<HubRegistration>(server, "POST", "/api/conversations/rest/agents", {
      name: "oc",
      key: res.body.key,
      server: { url: moved.url, password: PASSWORD },
    });
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    const agents = await api<HubAgentList>(server, "GET", "/api/conversations/rest/agents");
    expect(agents.body.agents.find((a) => a.name === "oc")?.liveAt).toBe(moved.url);
  });

  test("the password is never shown back: not by corral_agents, the REST listings, or the registration's answer", async () => {
    const oc = await fake();
    const windowClient = await open();
    const text = await call(windowClient, "corral_register", {
      name: "secretive",
      session: "secrets",
      server: { port: portOf(oc), password: PASSWORD },
    });
    expect(text).not.toContain(PASSWORD);
    expect(await call(windowClient, "corral_agents", { session: "secrets" })).not.toContain(PASSWORD);
    for (const route of ["/api/conversations", "/api/conversations/secrets/agents", "/api/conversations/secrets/messages", "/api/audit"]) {
      const res = await api<HubSessionList>(server, "GET", route);
      expect(JSON.stringify(res.body), route).not.toContain(PASSWORD);
    }
    // Refusals name the field, never the value: a wrong password, or one the schema refuses.
    const wrong = "wrong-but-secret-91c2";
    const refused = await call(windowClient, "corral_register", { name: "other", session: "secrets", server: { port: portOf(oc), password: wrong } });
    expect(refused).toMatch(/^error: server.password: /);
    expect(refused).not.toContain(wrong);
    const malformed = `${wrong}\nX-Injected: 1`;
    const byMcp = await registerText(windowClient, { name: "other", session: "secrets", server: { port: portOf(oc), password: malformed } });
    expect(byMcp).toMatch(/control characters/);
    expect(byMcp).not.toContain(wrong);
    const byRest = await api(server, "POST", "/api/conversations/secrets/agents", {
      name: "other",
      server: { port: portOf(oc), password: malformed },
    });
    expect(byRest.status).toBe(400);
    expect(JSON.stringify(byRest.body)).toMatch(/server.password/);
    expect(JSON.stringify(byRest.body)).not.toContain(wrong);
  });

  test("an unreachable server, a wrong or missing password and an unknown session are refused naming the field and the fix; nothing is registered", async () => {
    const oc = await fake();
    const client = await open();
    const closed = await closedPort();
    expect(await call(client, "corral_register", { name: "oc", session: "refusals", server: { port: closed } })).toBe(
      `error: server.port: OpenCode is not reachable at http://127.0.0.1:${closed}; start it with \`opencode serve --port ${closed}\`, or pass the port it printed`,
    );
    expect(await call(client, "corral_register", { name: "oc", session: "refusals", server: { port: portOf(oc), password: "wrong" } })).toBe(
      `error: server.password: OpenCode at ${oc.url} refused the password given: pass its OPENCODE_SERVER_PASSWORD as server.password`,
    );
    expect(await call(client, "corral_register", { name: "oc", session: "refusals", server: { port: portOf(oc) } })).toMatch(
      /^error: server.password: OpenCode at .* asks for a password: pass its OPENCODE_SERVER_PASSWORD as server.password$/,
    );
    const gone = "ses_0123456789abABCDEFGHIJKLMN";
    expect(
      await call(client, "corral_register", { name: "oc", session: "refusals", server: { port: portOf(oc), password: PASSWORD, session: gone } }),
    ).toMatch(
      new RegExp(`^error: server.session: OpenCode at .* has no session ${gone}; name one of its sessions, or leave session out for its latest$`),
    );
    const agents = await api<HubAgentList>(server, "GET", "/api/conversations/refusals/agents");
    expect(agents.body.agents.filter((a) => a.kind === "client")).toEqual([]);
  });

  test("hostile servers are refused before anything is sent: other hosts, metadata, Corral itself, odd schemes, ports and values", async () => {
    const client = await open();
    const corralPort = Number(new URL(server.url).port);
    const refused: [unknown, RegExp][] = [
      [{ url: "http://169.254.169.254/latest/meta-data" }, /server.url: 169.254.169.254 is not this machine/],
      [{ url: "http://10.0.0.1:4096" }, /server.url: 10.0.0.1 is not this machine/],
      [{ url: "http://[fd00:ec2::254]:80" }, /server.url: \[fd00:ec2::254\] is not this machine/],
      [{ url: "http://localhost.example.com:4096" }, /is not this machine/],
      [{ url: "http://127.0.0.1.nip.io:4096" }, /is not this machine/],
      [{ url: "file:///etc/passwd" }, /server.url: the server's URL must be http or https, not file:/],
      [{ url: "gopher://127.0.0.1:70" }, /must be http or https/],
      [{ url: "http://user:pw@127.0.0.1:4096" }, /server.url: the URL cannot carry a user or password/],
      [{ url: "http://127.0.0.1:4096/session?x=1" }, /without a path or query/],
      [{ url: "-http://127.0.0.1:4096" }, /server.url: -http:\/\/127.0.0.1:4096 is not a URL/],
      [{ url: "http://127.0.0.1:4096\n" }, /control characters/],
      [{ url: "" }, /server.url/],
      [{ url: "x".repeat(3000) }, /server.url/],
      // This Corral listens on a port it was not configured with (0): its guard refuses OpenCode's health check.
      [{ port: corralPort }, /server\.(port|password): /],
      [{ url: `http://localhost:${corralPort}`, password: "x" }, /server\.(url|password): /],
      [{ url: "http://127.0.0.1:0" }, /server.url: port 0 is no server's/],
      [{ port: 0 }, /server.port/],
      [{ port: 65536 }, /server.port/],
      [{ port: -1 }, /server.port/],
      [{ port: 4096.5 }, /server.port/],
      [{ port: "4096" }, /server.port/],
      [{}, /server.port: give the server's url or its port/],
      [{ port: 4096, url: "http://127.0.0.1:4096" }, /give the server's url or its port, one of them/],
      [{ port: 4096, password: "a\nb" }, /server.password: the password cannot contain control characters/],
      [{ port: 4096, password: "" }, /server.password/],
      [{ port: 4096, password: "p".repeat(1025) }, /server.password/],
      [{ port: 4096, session: "../../global/health" }, /server.session: not an OpenCode session id/],
      [{ port: 4096, session: "-ses_1" }, /server.session/],
      [{ port: 4096, extra: 1 }, /server/],
    ];
    for (const [given, why] of refused) {
      const result = await client.callTool({ name: "corral_register", arguments: { name: "hostile", session: "hostile", server: given } });
      expect(result.isError, JSON.stringify(given)).toBe(true);
      expect(textOf(result), JSON.stringify(given)).toMatch(why);
    }
    const agents = await api<HubAgentList>(server, "GET", "/api/conversations/hostile/agents");
    expect(agents.body.agents.filter((a) => a.kind === "client")).toEqual([]);
  });

  test("a loopback server that redirects, or answers as something else, is refused: the password never follows a redirect, its body is never shown", async () => {
    const seen: string[] = [];
    const other = await listenOnLoopback(
      createServer((req, res) => {
        seen.push(`${req.headers.host} ${req.url} ${req.headers.authorization ?? ""}`);
        if (req.url === "/global/health" && seen.length === 1) {
          res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data" });
          return res.end();
        }
        if (seen.length === 3) {
          res.writeHead(403, { "content-type": "text/plain" });
          return res.end("internal-service-secret");
        }
        res.writeHead(200, { "content-type": "text/html" });
        res.end("<html>not OpenCode</html>");
      }),
    );
    try {
      const client = await open();
      const port = Number(new URL(other.url).port);
      expect(await call(client, "corral_register", { name: "x", session: "redirect", server: { port, password: "pw" } })).toMatch(
        /^error: server.port: OpenCode is not reachable at http:\/\/127.0.0.1:\d+/,
      );
      expect(await call(client, "corral_register", { name: "x", session: "redirect", server: { port, password: "pw" } })).toMatch(
        /^error: server.port: http:\/\/127.0.0.1:\d+ answered, but not as OpenCode does; pass the port it printed$/,
      );
      // Another service's refusal is named by its status; its body is not read back to the caller.
      const forbidden = await call(client, "corral_register", { name: "x", session: "redirect", server: { port, password: "pw" } });
      expect(forbidden).toMatch(/^error: server.port: http:\/\/127.0.0.1:\d+ answered 403, not as OpenCode does; pass the port it printed$/);
      expect(seen).toHaveLength(3);
    } finally {
      await other.close();
    }
  });

  test("a loopback server that answers without end is refused once its answer passes the bound, not read into memory", async () => {
    let written = 0;
    const endless = await listenOnLoopback(
      createServer((_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        const chunk = Buffer.alloc(1024 * 1024, 0x20);
        const pump = () => {
          while (!res.destroyed && written < 64 * 1024 * 1024 && res.write(chunk)) written += chunk.length;
          if (!res.destroyed && written < 64 * 1024 * 1024) res.once("drain", pump);
        };
        pump();
      }),
    );
    try {
      const client = await open();
      const port = Number(new URL(endless.url).port);
      expect(await call(client, "corral_register", { name: "x", session: "endless", server: { port } })).toMatch(
        /^error: server.port: http:\/\/127.0.0.1:\d+ answered, but not as OpenCode does/,
      );
      // It stopped reading past 16 MiB: the server could not write the 64 MiB it tried to.
      expect(written).toBeLessThan(64 * 1024 * 1024);
    } finally {
      await endless.close();
    }
  });

  test("a client of another session cannot reach the target, even by its exact name", async () => {
    const oc = await fake();
    const windowClient = await open();
    const eve = await open();
    await register(windowClient, { name: "oc", session: "mine", server: { port: portOf(oc), password: PASSWORD } });
    const e = await register(eve, { name: "eve", session: "theirs" });
    expect(await call(eve, "corral_send", { handle: e, to: "oc", text: "let me in" })).toMatch(/^error: to: no agent named oc in session theirs/);
    expect(prompts(oc)).toHaveLength(0);
  });

  test("an answer owed when the server stopped is settled at the next start with an error saying to send again", async () => {
    const sent = await withRegistryOf(server.dataDir, (registry) =>
      registry.conversations.insertMessage({
        session: "restart",
        from: "dan",
        to: "oc",
        text: "before the restart",
        jobId: null,
        at: Date.now(),
        receivedAt: Date.now(),
        answerPending: true,
      }),
    );
    await server.services.conversations.recover();
    const page = await api<{ messages: HubMessage[] }>(server, "GET", "/api/conversations/restart/messages");
    expect(page.body.messages.map((m) => [m.from, m.to, m.text])).toEqual([
      ["dan", "oc", "before the restart"],
      ["oc", "dan", "error: Corral restarted before oc answered; send the message again"],
    ]);
    const owed = await withRegistryOf(server.dataDir, (registry) => registry.conversations.pendingAnswers());
    expect(owed.some((m) => m.id === sent.id)).toBe(false);
  });
});
