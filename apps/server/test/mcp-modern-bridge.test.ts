import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startServer, until, type TestServer } from "./helpers.js";
import { connectMcp, textOf } from "./mcp-client.js";

/**
 * The Node↔fetch bridge of the 2026-07-28 path (mcp/modern.ts) against clients that misbehave on
 * the wire: raw sockets, since an SDK client always reads what it is sent.
 */

const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** A 2026-07-28 tools/call as raw HTTP/1.1. */
function toolCall(server: TestServer, name: string, args: unknown, meta: Record<string, unknown> = {}): string {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args, _meta: { ...META, ...meta } } });
  return (
    `POST /mcp HTTP/1.1\r\nHost: ${new URL(server.url).host}\r\nAuthorization: ${server.auth.authorization}\r\n` +
    "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2026-07-28\r\n" +
    `Mcp-Method: tools/call\r\nMcp-Name: ${name}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

/** A socket that sends `request` and never reads what comes back; `closed` settles when the server ends it. */
function neverReads(server: TestServer, request: string): Promise<{ socket: net.Socket; closed: Promise<unknown> }> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => {
      socket.pause();
      socket.write(request);
      resolve({ socket, closed: new Promise((done) => socket.once("close", done)) });
    });
    socket.on("error", () => undefined);
    socket.once("error", reject);
  });
}

/** Connections the server holds now. */
const connections = (server: TestServer) =>
  new Promise<number>((resolve, reject) => server.app.server.getConnections((err, count) => (err ? reject(err) : resolve(count))));

describe("a 2026-07-28 client that never reads", () => {
  let server: TestServer;
  beforeAll(async () => {
    // Progress as often as it can be sent, and a small cap on what may wait for readers.
    server = await startServer({ CORRAL_PROGRESS_INTERVAL_MS: "1", CORRAL_MCP_MAX_PENDING_BYTES: String(1024 * 1024) });
  });
  afterAll(() => server.close());

  test("its _run's progress waits for it in the outbox, not the SDK's stream: past CORRAL_MCP_MAX_PENDING_BYTES it is dropped, its job kept", async () => {
    const workdir = path.join(server.root, "slow");
    // Every progress notification echoes the token: 32 KiB of it makes each one big, so the
    // kernel's buffers (megabytes on loopback) fill in a few hundred notifications, not tens of
    // thousands a loaded machine takes minutes to make.
    const progressToken = "p".repeat(32 * 1024);
    const { socket, closed } = await neverReads(server, toolCall(server, "kiro_run", { prompt: "sleep 120", workdir }, { progressToken }));
    // Progress as fast as it can be made: the kernel's buffers fill, then the server's, then the
    // cap drops the connection (seen by the server; the client sees it once it reads).
    await until(async () => ((await connections(server)) === 0 ? true : undefined), 90_000, "the connection dropped");
    socket.resume();
    await closed;
    const job = (await server.services.jobs.list({ limit: 10, offset: 0 })).jobs.find((j) => j.workdir === workdir);
    expect(job?.status).toBe("running");
    // A dropped stream is not a cancel (2026-07-28 has no other way to give up, but a drop looks the same).
    const client = await connectMcp(server, "/mcp", server.auth, "modern");
    expect(textOf(await client.callTool({ name: "corral_cancel", arguments: { job_id: job?.id } }))).toBe(`${job?.id}: cancelled`);
    expect(textOf(await client.callTool({ name: "corral_agents", arguments: {} }))).toContain("kiro");
    await client.close();
    await until(async () => ((await server.services.jobs.get(job?.id ?? "")).status === "cancelled" ? true : undefined));
  }, 120_000);
});
