import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, test } from "vitest";
import { sleep, startServer, tempDir, until } from "./helpers.js";
import { connectMcp, textOf } from "./mcp-client.js";
import { startServerProcess, type ServerProcess } from "./server-process.js";
import { WsClient } from "./ws-client.js";

/**
 * Floods from a client that holds the token (MCP) or from any local process (half-sent
 * headers), against the real server as its own process: what it holds is read from
 * /proc/<pid>/status, and `/api/health` must answer while they last and after.
 */

const TOKEN = "test-token-0123456789";
const auth = { authorization: `Bearer ${TOKEN}` };
const mib = (bytes: number) => Math.round(bytes / 1024 / 1024);

/** The process's resident memory now and at its peak, in bytes. */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN) * 1024;
  return { rss: kib("VmRSS"), peak: kib("VmHWM") };
}

async function health(port: number): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}/api/health`, { signal: AbortSignal.timeout(20_000) });
  await res.arrayBuffer();
  return res.status;
}

/** A socket that sends `request` and never reads what comes back. */
function neverReads(port: number, request: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => {
      socket.pause();
      socket.write(request);
      resolve(socket);
    });
    socket.on("error", () => undefined);
    socket.once("error", reject);
  });
}

function mcpPost(port: number, sessionId: string, body: unknown): string {
  const json = JSON.stringify(body);
  return (
    `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\n` +
    `Accept: application/json, text/event-stream\r\nMcp-Session-Id: ${sessionId}\r\nContent-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`
  );
}

async function initialize(port: number): Promise<string> {
  const post = (body: unknown, sessionId?: string) =>
    fetch(`http://127.0.0.1:${port}/mcp`, {
      method: "POST",
      headers: {
        ...auth,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(sessionId ? { "mcp-session-id": sessionId } : {}),
      },
      body: JSON.stringify(body),
    });
  const res = await post({
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    // The revision that still had batches: the most a client may send.
    params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "flood", version: "1" } },
  });
  await res.text();
  const sessionId = res.headers.get("mcp-session-id") ?? "";
  await (await post({ jsonrpc: "2.0", method: "notifications/initialized" }, sessionId)).text();
  return sessionId;
}

describe("an MCP client that posts calls with big answers and never reads", () => {
  const root = tempDir();
  let server: ServerProcess | undefined;
  afterAll(async () => {
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  test("220 sockets of batched corral_logs calls: the server's memory stays bounded and health answers during and after", async () => {
    // A heap limit well under what the flood asks for: an answer held for each socket would end the process.
    server = await startServerProcess(root, { CORRAL_TOKEN: TOKEN, NODE_OPTIONS: "--max-old-space-size=512" });
    const { port } = server;
    const pid = server.child.pid ?? 0;
    const launched = await fetch(`http://127.0.0.1:${port}/api/jobs`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ agent: "kiro", prompt: "bytes 3000000", workdir: path.join(root, "big") }),
    });
    const job = ((await launched.json()) as { id: string }).id;
    await until(
      async () => {
        const res = await fetch(`http://127.0.0.1:${port}/api/jobs/${job}`, { headers: auth });
        return ((await res.json()) as { status: string }).status === "succeeded" || undefined;
      },
      60_000,
      "the job with a big output",
    );
    const sessions = await Promise.all(Array.from({ length: 110 }, () => initialize(port)));
    const before = memoryOf(pid);

    // Each call answers 200,000 characters of output: a batch of 100 asks for 30 MB of JSON to be held for a client that does not read.
    const logs = (id: number) => ({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "corral_logs", arguments: { job_id: job, tail: 100_000, max_chars: 200_000 } },
    });
    const sockets: net.Socket[] = [];
    for (let i = 0; i < 220; i++) {
      const sessionId = sessions[i % sessions.length] ?? "";
      sockets.push(
        await neverReads(
          port,
          mcpPost(
            port,
            sessionId,
            Array.from({ length: 100 }, (_, j) => logs(i * 1000 + j)),
          ),
        ),
      );
      // And batches as big as a session takes (16 calls, 5 MB of answers), two for each session, on sockets of their own.
      sockets.push(
        await neverReads(
          port,
          mcpPost(
            port,
            sessionId,
            Array.from({ length: 16 }, (_, j) => logs(i * 1000 + 500 + j)),
          ),
        ),
      );
      if (i % 20 === 19) expect(await health(port)).toBe(200);
    }
    await sleep(2000);
    expect(await health(port)).toBe(200);
    const during = memoryOf(pid);
    for (const socket of sockets) socket.destroy();
    await sleep(1000);
    expect(await health(port)).toBe(200);
    const after = memoryOf(pid);
    console.log(
      `MCP flood: server RSS ${mib(before.rss)} MiB before, ${mib(during.rss)} MiB during, ${mib(after.rss)} MiB after; peak ${mib(after.peak)} MiB`,
    );
    expect(after.peak).toBeLessThan(before.rss + 768 * 1024 * 1024);

    // The server still serves MCP as before.
    const client = await connectMcp({ url: `http://127.0.0.1:${port}`, auth });
    const tail = textOf(await client.callTool({ name: "corral_logs", arguments: { job_id: job, tail: 5 } }));
    expect(tail).toMatch(/ · listo · /);
    expect(tail).toContain("\nx\n");
    await client.close();
  }, 240_000);
});

describe("half-sent request headers from any local process (slowloris)", () => {
  const root = tempDir();
  let server: ServerProcess | undefined;
  afterAll(async () => {
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  /** Connections that send part of a request's headers and then nothing; those the server closes are let go. */
  async function halfSent(port: number, count: number): Promise<net.Socket[]> {
    const sockets: net.Socket[] = [];
    for (let i = 0; i < count; i += 100) {
      const batch = Array.from(
        { length: Math.min(100, count - i) },
        () =>
          new Promise<net.Socket>((resolve) => {
            const socket = net.connect(port, "127.0.0.1", () => {
              socket.write("GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
              resolve(socket);
            });
            socket.on("error", () => resolve(socket));
          }),
      );
      sockets.push(...(await Promise.all(batch)));
    }
    return sockets;
  }

  test("3,000 of them against a 1,024-descriptor server: health answers 200, a WebSocket and an MCP call in progress go on", async () => {
    server = await startServerProcess(root, { CORRAL_TOKEN: TOKEN }, { openFiles: 1024 });
    const { port } = server;
    const at = { url: `http://127.0.0.1:${port}`, auth };
    const ws = await WsClient.open(at);
    const mcp = await connectMcp(at);
    const running = mcp.callTool({ name: "kiro_run", arguments: { prompt: "sleep 6\nprint 2", workdir: path.join(root, "long") } });

    const first = await halfSent(port, 3000);
    expect(await health(port)).toBe(200);
    // And while more keep coming.
    const [more, during] = await Promise.all([halfSent(port, 1000), health(port)]);
    expect(during).toBe(200);
    expect(await health(port)).toBe(200);

    // The long-lived connections were never taken for room.
    ws.send({ type: "subscribe_jobs" });
    await ws.waitFor("subscribed");
    expect(textOf(await running)).toMatch(/^ok\n/);
    expect((await mcp.listTools()).tools.length).toBeGreaterThan(0);
    // Most of the flood was closed to make room (past the cap the oldest half-sent ones go first).
    const open = [...first, ...more].filter((s) => !s.destroyed && s.readyState === "open").length;
    console.log(`slowloris: ${open} of 4,000 half-sent connections still open`);
    expect(open).toBeLessThan(1024);
    for (const socket of [...first, ...more]) socket.destroy();
    await Promise.all([ws.close(), mcp.close()]);
    expect(server.stderr()).not.toMatch(/EMFILE/);
  }, 180_000);
});

test("a connection that has not sent its headers within CORRAL_HEADERS_TIMEOUT_S is closed with 408", async () => {
  const server = await startServer({ CORRAL_HEADERS_TIMEOUT_S: "1" });
  try {
    const socket = net.connect(Number(new URL(server.url).port), "127.0.0.1");
    let answer = "";
    socket.on("data", (d: Buffer) => (answer += d.toString()));
    socket.on("error", () => undefined);
    const closed = new Promise((resolve) => socket.once("close", resolve));
    socket.write("GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
    await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    // A request sent whole is answered as ever.
    expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
  } finally {
    await server.close();
  }
}, 60_000);

/** Sends a WebSocket upgrade for `target` on a raw socket; resolves with what came back once the server closed it. */
function upgrade(port: number, target: string): { answer: () => string; closed: Promise<void>; socket: net.Socket } {
  const socket = net.connect(port, "127.0.0.1");
  let answer = "";
  socket.on("data", (d: Buffer) => (answer += d.toString("latin1")));
  socket.on("error", () => undefined);
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  socket.write(
    `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
  );
  return { answer: () => answer, closed, socket };
}

test("a WebSocket upgrade without the token holds no connection: only /api/ws upgrades, anything else is 404 and closed", async () => {
  const server = await startServer({ CORRAL_MAX_CONNECTIONS: "16" });
  const port = Number(new URL(server.url).port);
  const held: net.Socket[] = [];
  try {
    // Public pages (the panel, health) upgraded by a client without the token, more than the cap:
    // each was answered 101 and held open, never idle, so no one else could connect.
    for (const target of ["/", "/api/health", "/api/ws/stats", "/nowhere"]) {
      const tries = Array.from({ length: 5 }, () => upgrade(port, target));
      held.push(...tries.map((t) => t.socket));
      await Promise.all(tries.map((t) => t.closed));
      for (const t of tries) expect(t.answer(), target).toMatch(/^HTTP\/1\.1 404 /);
    }
    // /api/ws itself still goes through the guard: 401, closed.
    const ws = upgrade(port, "/api/ws");
    held.push(ws.socket);
    await ws.closed;
    expect(ws.answer()).toMatch(/^HTTP\/1\.1 401 /);
    expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
  } finally {
    for (const socket of held) socket.destroy();
    await server.close();
  }
}, 60_000);

test("connections whose client reads none of its answers are pushed out at the cap, never the next real request", async () => {
  // The panel's biggest file: public, so a client without the token can ask for it.
  const assets = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../web/dist/assets");
  expect(existsSync(assets), "the panel is built (pnpm build)").toBe(true);
  const [biggest] = readdirSync(assets)
    .filter((f) => f.endsWith(".js"))
    .sort((a, b) => statSync(path.join(assets, b)).size - statSync(path.join(assets, a)).size);
  const server = await startServer({ CORRAL_MAX_CONNECTIONS: "16" });
  const port = Number(new URL(server.url).port);
  const held: net.Socket[] = [];
  const accepted: net.Socket[] = [];
  server.app.server.on("connection", (s: net.Socket) => accepted.push(s));
  try {
    // As many connections as the cap, each asking for it 40 times in one write and reading
    // nothing: the answers fill the socket's buffers, and the connection is busy for good.
    for (let i = 0; i < 16; i++) {
      const socket = net.connect(port, "127.0.0.1");
      socket.on("error", () => undefined);
      socket.pause();
      socket.write(`GET /assets/${biggest} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`.repeat(40));
      held.push(socket);
    }
    // Every one of them stuck: bytes the client has not taken wait in the server.
    await until(() => (accepted.filter((s) => s.writableLength > 0).length >= 16 ? true : undefined), 60_000, "16 stuck connections");
    // A generous bound, not a timing assertion: without room it would never be answered.
    const health = await fetch(`${server.url}/api/health`, { signal: AbortSignal.timeout(20_000) }).then(
      (r) => r.status,
      (e: unknown) => String(e),
    );
    expect(health).toBe(200);
  } finally {
    for (const socket of held) socket.destroy();
    await server.close();
  }
}, 90_000);

test("requests whose body trickles in hold no room: the next real request is answered", async () => {
  const server = await startServer({ CORRAL_MAX_CONNECTIONS: "16" });
  const port = Number(new URL(server.url).port);
  const held: net.Socket[] = [];
  const accepted: net.Socket[] = [];
  server.app.server.on("connection", (s: net.Socket) => accepted.push(s));
  const trickle = setInterval(() => {
    for (const socket of held) socket.write(" ");
  }, 200);
  try {
    // As many as the cap, without the token, to paths that read the body before answering (no
    // route: the panel's fallback; a GET-only route): a byte at a time, for the 5 minutes a
    // request may take.
    for (let i = 0; i < 16; i++) {
      const socket = net.connect(port, "127.0.0.1");
      socket.on("error", () => undefined);
      const target = i % 2 ? "/nowhere" : "/api/health";
      socket.write(`POST ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`);
      held.push(socket);
    }
    await until(() => (accepted.length >= 16 ? true : undefined), 30_000, "16 connections");
    // A generous bound, not a timing assertion: without room it would wait for those 5 minutes.
    const health = await fetch(`${server.url}/api/health`, { signal: AbortSignal.timeout(20_000) }).then(
      (r) => r.status,
      (e: unknown) => String(e),
    );
    expect(health).toBe(200);
  } finally {
    clearInterval(trickle);
    for (const socket of held) socket.destroy();
    await server.close();
  }
}, 90_000);
