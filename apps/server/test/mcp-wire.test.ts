// MCP over raw HTTP, as the bytes leave the server: what the SDK client in mcp.test.ts would
// smooth over (an answer split or held back, a stream whose headers never come).
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { api, startServer, until, type TestServer } from "./helpers.js";

let server: TestServer;
let sessionId = "";
let nextId = 1;
let workdirs = 0;
const workdir = () => path.join(server.root, `wire-work-${++workdirs}`);

beforeAll(async () => {
  server = await startServer({ CORRAL_PROGRESS_INTERVAL_MS: "100" });
  const res = await post({
    jsonrpc: "2.0",
    id: nextId++,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "wire", version: "1" } },
  });
  sessionId = res.headers.get("mcp-session-id") ?? "";
  await res.text();
  await (await post({ jsonrpc: "2.0", method: "notifications/initialized" })).text();
});
afterAll(async () => {
  await server.close();
});

function post(message: unknown): Promise<Response> {
  return fetch(`${server.url}/mcp`, {
    method: "POST",
    headers: {
      ...server.auth,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
      ...(sessionId ? { "mcp-session-id": sessionId } : {}),
    },
    body: JSON.stringify(message),
  });
}

/** The `data:` of each SSE event in `text`, parsed. */
function events(text: string): Record<string, unknown>[] {
  return text
    .split("\n\n")
    .filter((block) => block.trim())
    .map((block) => {
      const data = block
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).trim())
        .join("\n");
      return JSON.parse(data) as Record<string, unknown>;
    });
}

/** Reads SSE events from a stream as they come. */
function eventReader(body: ReadableStream<Uint8Array>) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  return {
    async next(): Promise<Record<string, unknown>> {
      for (;;) {
        const end = buffered.indexOf("\n\n");
        if (end >= 0) {
          const block = buffered.slice(0, end + 2);
          buffered = buffered.slice(end + 2);
          if (block.includes("data:")) return events(block)[0]!;
          continue; // a keep-alive comment
        }
        const { done, value } = await reader.read();
        if (done) throw new Error("the stream ended");
        buffered += decoder.decode(value, { stream: true });
      }
    },
    cancel: () => reader.cancel(),
  };
}

/** Arguments each tool accepts, enough for it to answer. */
function argumentsFor(tool: string): Record<string, unknown> {
  if (tool.endsWith("_run") || tool.endsWith("_run_async")) return { prompt: "hello", workdir: workdir() };
  if (tool.endsWith("_done") || tool === "corral_cancel" || tool === "corral_logs") return { job_id: "zzzzzzzzzzzz" };
  if (tool === "corral_wait") return { job_ids: ["zzzzzzzzzzzz"], timeout_s: 1 };
  return {};
}

describe("MCP on the wire", () => {
  test("every tool answers with one well-formed JSON-RPC message, a whole SSE body", async () => {
    const listId = nextId++;
    const listed = await post({ jsonrpc: "2.0", id: listId, method: "tools/list" });
    const [list] = events(await listed.text());
    const tools = (list?.result as { tools: { name: string }[] } | undefined)?.tools.map((t) => t.name) ?? [];
    expect(tools.length).toBeGreaterThan(15);
    for (const name of tools) {
      const id = nextId++;
      const res = await post({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: argumentsFor(name) } });
      expect(res.status, name).toBe(200);
      expect(res.headers.get("content-type"), name).toBe("text/event-stream");
      expect(res.headers.get("mcp-session-id"), name).toBe(sessionId);
      const body = await res.text();
      expect(body, name).toMatch(/^event: message\ndata: .*\n\n$/);
      const [message, ...more] = events(body);
      expect(more, name).toEqual([]);
      expect(message?.jsonrpc, name).toBe("2.0");
      expect(message?.id, name).toBe(id);
      const result = message?.result as { content: { type: string; text: string }[] };
      expect(result.content.length, name).toBeGreaterThan(0);
      for (const part of result.content) expect(typeof part.text, name).toBe("string");
    }
  });

  test("a _run streams its progress while the job runs, then its answer", async () => {
    const id = nextId++;
    const res = await post({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "kiro_run", arguments: { prompt: "sleep 1\nhello", workdir: workdir() }, _meta: { progressToken: "p1" } },
    });
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const stream = eventReader(res.body!);
    const first = await stream.next();
    expect(first.method).toBe("notifications/progress");
    expect((first.params as { progressToken: string }).progressToken).toBe("p1");
    // It came while the job was still running: held back to the end, it would come after.
    const running = server.services.jobs.list({ limit: 50, offset: 0, status: ["running"] }).jobs;
    expect(running.map((j) => j.prompt)).toContain("sleep 1\nhello");
    let answer = await stream.next();
    while (answer.method === "notifications/progress") answer = await stream.next();
    expect(answer.id).toBe(id);
    expect((answer.result as { content: { text: string }[] }).content[0]?.text).toMatch(/^ok\n/);
  });

  test("the GET stream sends its headers at once, and tools/list_changed when an agent is added", async () => {
    // The SDK sends a keep-alive comment only every 15 s: headers held back until the first event
    // would outlast this test's timeout.
    const res = await fetch(`${server.url}/mcp`, {
      headers: { ...server.auth, accept: "text/event-stream", "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const stream = eventReader(res.body!);
    const added = await api(server, "POST", "/api/agents", {
      name: "wire_extra",
      kind: "command",
      command: "/bin/true",
      args: [],
      workdir: workdir(),
    });
    expect(added.status).toBe(201);
    const event = await stream.next();
    expect(event.method).toBe("notifications/tools/list_changed");
    await stream.cancel();
  }, 10_000);

  test("a GET stream the client left is released: the session can open another", async () => {
    // The transport allows one GET stream per session and answers 409 until the last one is
    // released, which happens once the server sees the client go.
    const openOnceFree = () =>
      until(async () => {
        const controller = new AbortController();
        const res = await fetch(`${server.url}/mcp`, {
          signal: controller.signal,
          headers: { ...server.auth, accept: "text/event-stream", "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" },
        });
        if (res.status === 200) return controller;
        await res.body?.cancel();
        return undefined;
      });
    (await openOnceFree()).abort();
    (await openOnceFree()).abort();
  });

  test("a client that leaves during a _run frees the stream; the session goes on", async () => {
    const controller = new AbortController();
    const res = await fetch(`${server.url}/mcp`, {
      method: "POST",
      signal: controller.signal,
      headers: {
        ...server.auth,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": sessionId,
        "mcp-protocol-version": "2025-06-18",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: nextId++,
        method: "tools/call",
        params: { name: "gemini_run", arguments: { prompt: "sleep 0.5\nhello", workdir: workdir() }, _meta: { progressToken: "p2" } },
      }),
    });
    await eventReader(res.body!).next();
    controller.abort();
    // The job ends as it would have; its answer then has nowhere to go, and nothing breaks.
    await until(() => server.services.jobs.list({ limit: 50, offset: 0, status: ["running"] }).jobs.length === 0 || undefined);
    const id = nextId++;
    const ping = await post({ jsonrpc: "2.0", id, method: "ping" });
    expect(events(await ping.text())).toEqual([{ jsonrpc: "2.0", id, result: {} }]);
  });
});
