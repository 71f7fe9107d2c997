import path from "node:path";
import { describe, expect, test } from "vitest";
import type { Job, WsStats } from "@corral/shared";
import { SEND_BUFFER_CAP } from "../src/ws/connection.js";
import { PAGE_BYTES } from "../src/ws/job-stream.js";
import { api, sleep, startServer, until, type TestServer } from "./helpers.js";
import { connectMcp, textOf } from "./mcp-client.js";

/** These limits are those of 2025-11-25 sessions (a 2026-07-28 request holds none): an SDK client on a session, whatever era the run tests. */
const connectSession = (server: TestServer) => connectMcp(server, "/mcp?toolsets=hub", server.auth, "legacy");
import { WsClient } from "./ws-client.js";

/**
 * Per-connection limits, with the numbers that once took the server to 2.4 GiB and slowed
 * every agent change to 2.6 s. Memory is printed, not asserted; what is asserted is what the
 * server says it holds.
 */

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

describe("WebSocket", () => {
  test("150 clients that never read, following 32 streams each, cost the server at most the cap per connection", async () => {
    const server = await startServer({ CORRAL_WS_MAX_CONNECTIONS: "200" });
    const clients: WsClient[] = [];
    try {
      await server.services.agents.create({ name: "burst", kind: "kiro", maxConcurrent: 32 });
      const jobs: Job[] = [];
      for (let i = 0; i < 32; i++) {
        const res = await api<Job>(server, "POST", "/api/jobs", {
          agent: "burst",
          prompt: "sleep 1\nbytes 1048576",
          workdir: path.join(server.root, `b${i}`),
        });
        expect(res.status).toBe(201);
        jobs.push(res.body);
      }
      const rssBefore = process.memoryUsage().rss;
      for (let i = 0; i < 150; i++) {
        const client = await WsClient.open(server);
        clients.push(client);
        client.socket.pause();
        for (const job of jobs) client.send({ type: "subscribe_job", jobId: job.id, cursor: 0 });
      }
      const ended = await server.services.waits.waitFor(
        jobs.map((j) => j.id),
        120_000,
      );
      expect(ended.map((j) => j.status)).toEqual(jobs.map(() => "succeeded"));
      // Every subscription is in place (a connection handles its messages one after another, and
      // under load the last of 4,800 may come after the jobs end), then every stream pushes until
      // its connection is full.
      let following: number[] = [];
      await until(
        async () => {
          following = (await api<WsStats>(server, "GET", "/api/ws/stats")).body.connections.map((c) => c.streams.length);
          return following.length === 150 && following.every((n) => n === 32) ? true : undefined;
        },
        60_000,
        "150 connections following 32 streams each",
      ).catch((err: unknown) => {
        throw new Error(`${String(err)}; streams per connection: ${following.join(" ")}`);
      });
      let stats: WsStats | undefined;
      for (let settled = 0, last = -1; settled < 3; ) {
        await sleep(500);
        stats = (await api<WsStats>(server, "GET", "/api/ws/stats")).body;
        settled = stats.bufferedBytes === last ? settled + 1 : 0;
        last = stats.bufferedBytes;
      }
      if (!stats) throw new Error("no stats");
      console.log(
        `150 stalled clients × 32 streams: the server queues ${mib(stats.bufferedBytes)}; process RSS ${mib(process.memoryUsage().rss)} (${mib(rssBefore)} before)`,
      );
      expect(stats.connections).toHaveLength(150);
      // At most the cap plus one message per connection: a page of output (a live chunk is read a
      // page at a time too, with up to 3 bytes of a character held over) and its JSON head.
      const bound = SEND_BUFFER_CAP + PAGE_BYTES + 1024;
      for (const c of stats.connections) {
        expect(c.streams).toHaveLength(32);
        expect(c.peakBufferedBytes).toBeLessThanOrEqual(bound);
        expect(c.bufferedBytes).toBeLessThanOrEqual(bound);
      }
      // The queues did fill: the clients really stopped reading.
      expect(stats.connections.filter((c) => c.bufferedBytes > SEND_BUFFER_CAP / 2).length).toBeGreaterThan(100);
      expect(stats.bufferedBytes).toBeLessThanOrEqual(150 * bound);
      expect((await api(server, "GET", "/api/health")).status).toBe(200);

      // A client that reads again gets all 32 streams whole: no stream starves behind the others.
      const reader = clients[0] as WsClient;
      reader.socket.resume();
      const whole = 1048576 + "done kiro-cli-chat\n".length;
      for (const job of jobs) await until(() => (reader.text(job.id).length >= whole ? true : undefined), 60_000, `all of job ${job.id}`);
      for (const job of jobs) expect(reader.text(job.id).length).toBe(whole);
    } finally {
      for (const c of clients) c.socket.terminate();
      await server.close();
    }
  }, 300_000);

  test("connections past CORRAL_WS_MAX_CONNECTIONS are closed with 1013 and the reason", async () => {
    const server = await startServer({ CORRAL_WS_MAX_CONNECTIONS: "3" });
    try {
      const open = await Promise.all([0, 1, 2].map(() => WsClient.open(server)));
      const extra = await WsClient.open(server);
      const [code, reason] = await new Promise<[number, string]>((resolve) => extra.socket.once("close", (c, r) => resolve([c, r.toString()])));
      expect(code).toBe(1013);
      expect(reason).toBe("too many WebSocket connections (3); close one or raise CORRAL_WS_MAX_CONNECTIONS");
      const stats = (await api<WsStats>(server, "GET", "/api/ws/stats")).body;
      expect(stats.connections).toHaveLength(3);
      expect(stats.maxConnections).toBe(3);
      expect(stats.refused).toBe(1);
      // A place freed is a place taken.
      await open[0]?.close();
      await until(async () => ((await api<WsStats>(server, "GET", "/api/ws/stats")).body.connections.length === 2 ? true : undefined));
      const again = await WsClient.open(server);
      again.send({ type: "subscribe_jobs" });
      await again.waitFor("subscribed");
      await Promise.all([...open.slice(1), again].map((c) => c.close()));
    } finally {
      await server.close();
    }
  });
});

describe("MCP sessions", () => {
  const post = (server: TestServer, body: unknown, sessionId?: string) =>
    fetch(`${server.url}/mcp?toolsets=hub`, {
      method: "POST",
      headers: {
        ...server.auth,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(sessionId ? { "mcp-session-id": sessionId } : {}),
      },
      body: JSON.stringify(body),
    });
  const initialize = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
  };

  /** A raw client: initialize and the initialized notification; the session id, or the refusal. */
  async function openSession(server: TestServer): Promise<{ status: number; sessionId: string; text: string }> {
    const res = await post(server, initialize);
    const text = await res.text();
    const sessionId = res.headers.get("mcp-session-id") ?? "";
    if (res.ok) await (await post(server, { jsonrpc: "2.0", method: "notifications/initialized" }, sessionId)).text();
    return { status: res.status, sessionId, text };
  }

  test("2,000 sessions: at most the cap are held, the least recently used idle ones make room, agent changes still work", async () => {
    const server = await startServer({ CORRAL_MCP_MAX_SESSIONS: "50" });
    try {
      const listeners = server.services.agents.listenerCount("changed");
      const rssBefore = process.memoryUsage().rss;
      const ids: string[] = [];
      for (let i = 0; i < 2000; i += 20) {
        const batch = await Promise.all(Array.from({ length: 20 }, () => openSession(server)));
        for (const s of batch) {
          expect(s.status, s.text).toBe(200);
          ids.push(s.sessionId);
        }
      }
      console.log(`2,000 MCP sessions opened with a cap of 50: process RSS ${mib(process.memoryUsage().rss)} (${mib(rssBefore)} before)`);
      // Sessions do not each listen to the registry: an agent change costs the same with 2,000.
      expect(server.services.agents.listenerCount("changed")).toBe(listeners);

      // The newest 50 are there; the older ones were closed, and say what happened.
      const list = { jsonrpc: "2.0", id: 2, method: "tools/list" };
      // Asked 20 at a time, as they were opened: 2,000 requests at once overflowed the listen
      // backlog of a loaded 2-core machine (the kernel reset connections: fetch failed, ECONNRESET).
      const statuses: number[] = [];
      for (let i = 0; i < ids.length; i += 20) {
        statuses.push(...(await Promise.all(ids.slice(i, i + 20).map(async (id) => (await post(server, list, id)).status))));
      }
      expect(statuses.slice(-50)).toEqual(Array(50).fill(200));
      expect(statuses.slice(0, -50)).toEqual(Array(1950).fill(404));
      const gone = await post(server, list, ids[0]);
      expect(((await gone.json()) as { error: { message: string } }).error.message).toMatch(
        /made room for newer sessions \(at most 50, CORRAL_MCP_MAX_SESSIONS\); initialize a new session/,
      );

      // An SDK client among them hears of an agent change, and the change itself answers.
      const client = await connectSession(server);
      const changed = new Promise<void>((resolve) => client.setNotificationHandler("notifications/tools/list_changed", () => resolve()));
      const patched = await api(server, "PATCH", "/api/agents/kiro", { maxConcurrent: 3 });
      expect(patched.status).toBe(200);
      const created = await api(server, "POST", "/api/agents", { name: "late", kind: "command", command: "echo" });
      expect(created.status).toBe(201);
      await changed;
      expect((await client.listTools()).tools.map((t) => t.name)).toContain("late_run");
      await client.close();
      expect((await api(server, "GET", "/api/health")).status).toBe(200);
    } finally {
      await server.close();
    }
  }, 120_000);

  test("130 initialize calls push idle sessions out, but a hub name and its messages stay with the handle", async () => {
    const server = await startServer();
    try {
      const owner = await connectSession(server);
      const bob = await connectSession(server);
      const handleOf = (result: unknown) => /^handle: (\S+)$/m.exec(textOf(result))?.[1] ?? "";
      const alice = handleOf(await owner.callTool({ name: "corral_register", arguments: { name: "alice", session: "review" } }));
      const hb = handleOf(await bob.callTool({ name: "corral_register", arguments: { name: "bob", session: "review" } }));
      expect(alice).not.toBe("");

      // The attacker fills the table with idle sessions, pushing the owner's out.
      const opened = [];
      for (let i = 0; i < 130; i++) opened.push(await openSession(server));
      expect(opened.every((s) => s.status === 200)).toBe(true);
      const call = (sessionId: string, id: number, name: string, args: Record<string, unknown>) =>
        post(server, { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } }, sessionId);
      const attacker = opened.at(-1)?.sessionId ?? "";
      const taken = await call(attacker, 2, "corral_register", { name: "alice", session: "review" });
      expect(await taken.text()).toMatch(/the name alice is taken in session review by a registration that is online/);

      // bob's session was pushed out too; bob's handle goes on from a new one.
      const bobAgain = await connectSession(server);
      expect(textOf(await bobAgain.callTool({ name: "corral_send", arguments: { handle: hb, to: "alice", text: "the secret plan" } }))).toMatch(
        /^sent #/,
      );
      const guessed = await call(attacker, 3, "corral_receive", { handle: "A".repeat(43), timeout_s: 0 });
      expect(await guessed.text()).toMatch(/handle: no live registration has this handle/);
      // The owner comes back in a new session with its handle: its name and its message are there.
      const back = await connectSession(server);
      const received = textOf(await back.callTool({ name: "corral_receive", arguments: { handle: alice, timeout_s: 5 } }));
      expect(received).toMatch(/^1 message\(s\)\n--- #\d+ from bob to alice/);
      expect(received).toContain("the secret plan");
      await Promise.all([owner.close().catch(() => undefined), bob.close().catch(() => undefined), bobAgain.close(), back.close()]);
    } finally {
      await server.close();
    }
  }, 60_000);

  test("when every session is busy with a call, a new one is refused with a JSON-RPC error saying what to do", async () => {
    const server = await startServer({ CORRAL_MCP_MAX_SESSIONS: "2" });
    try {
      const busy = await Promise.all([connectSession(server), connectSession(server)]);
      const calls = busy.map((c, i) =>
        c.callTool({ name: "kiro_run", arguments: { prompt: "sleep 2\nprint 1", workdir: path.join(server.root, `busy${i}`) } }),
      );
      await until(async () => ((await api<{ total: number }>(server, "GET", "/api/jobs?status=running")).body.total === 2 ? true : undefined));
      const refused = await openSession(server);
      expect(refused.status).toBe(503);
      const body = JSON.parse(refused.text) as { jsonrpc: string; error: { code: number; message: string } };
      expect(body.jsonrpc).toBe("2.0");
      expect(body.error.message).toMatch(/^too many MCP sessions: all 2 are busy with calls \(CORRAL_MCP_MAX_SESSIONS\); wait for a call to end/);
      // The calls go on; once they end, their sessions are idle and the oldest makes room.
      for (const result of await Promise.all(calls)) expect(textOf(result)).toMatch(/^ok\n/);
      expect((await openSession(server)).status).toBe(200);
      await Promise.all(busy.map((c) => c.close()));
    } finally {
      await server.close();
    }
  }, 60_000);
});
