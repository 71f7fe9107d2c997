// MCP over raw HTTP, as the bytes leave the server: what the SDK client in mcp.test.ts would
// smooth over (an answer split or held back, a stream whose headers never come, a refusal's shape).
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { api, startServer, until, type TestServer } from "./helpers.js";
import { registryOnPostgres } from "./postgres.js";

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

function post(message: unknown, headers: Record<string, string> = {}, session = sessionId): Promise<Response> {
  return fetch(`${server.url}/mcp`, {
    method: "POST",
    headers: {
      ...server.auth,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
      ...(session ? { "mcp-session-id": session } : {}),
      ...headers,
    },
    body: JSON.stringify(message),
  });
}

/**
 * The JSON-RPC messages of an answer, checking it is whole: one JSON body whose length was sent
 * ahead of it, or an event stream of whole events.
 */
async function messagesOf(res: Response): Promise<Record<string, unknown>[]> {
  const body = await res.text();
  const type = res.headers.get("content-type");
  if (type === "application/json") {
    expect(res.headers.get("content-length")).toBe(String(Buffer.byteLength(body)));
    const parsed = JSON.parse(body) as Record<string, unknown> | Record<string, unknown>[];
    return Array.isArray(parsed) ? parsed : [parsed];
  }
  expect(type).toBe("text/event-stream");
  expect(body).toMatch(/^(event: message\ndata: .*\n\n)+$/);
  return events(body);
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
  test("every tool answers with one well-formed JSON-RPC message in a whole body", async () => {
    const listId = nextId++;
    const [list] = await messagesOf(await post({ jsonrpc: "2.0", id: listId, method: "tools/list" }));
    const tools = (list?.result as { tools: { name: string }[] } | undefined)?.tools.map((t) => t.name) ?? [];
    expect(tools.length).toBeGreaterThan(15);
    for (const name of tools) {
      const id = nextId++;
      const res = await post({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: argumentsFor(name) } });
      expect(res.status, name).toBe(200);
      expect(res.headers.get("mcp-session-id"), name).toBe(sessionId);
      const [message, ...more] = await messagesOf(res);
      expect(more, name).toEqual([]);
      expect(message?.jsonrpc, name).toBe("2.0");
      expect(message?.id, name).toBe(id);
      const result = message?.result as { content: { type: string; text: string }[] };
      expect(result.content.length, name).toBeGreaterThan(0);
      for (const part of result.content) expect(typeof part.text, name).toBe("string");
    }
  });

  test("an answer ready at once is one JSON body, a 2025-03-26 batch's an array; notifications get 202", async () => {
    const jobId = (await messagesOf(await post(call("gemini_run_async", { prompt: "hello", workdir: workdir() }))))[0]?.result as {
      content: { text: string }[];
    };
    const job = jobId.content[0]!.text.trim();
    await until(async () => (await server.services.jobs.get(job))?.endedAt ?? undefined);
    for (const message of [{ jsonrpc: "2.0", id: nextId++, method: "ping" }, call("gemini_done", { job_id: job })]) {
      const res = await post(message);
      // PostgreSQL answers `_done` over the network, never within the turn: an event stream, as for any later answer.
      const later = registryOnPostgres && message.method !== "ping";
      expect(res.headers.get("content-type")).toBe(later ? "text/event-stream" : "application/json");
      expect(res.headers.get("mcp-session-id")).toBe(sessionId);
      const [answer] = await messagesOf(res);
      expect(answer?.id).toBe(message.id);
    }
    const batch = [
      { jsonrpc: "2.0", id: nextId++, method: "ping" },
      { jsonrpc: "2.0", method: "notifications/roots/list_changed" },
      { jsonrpc: "2.0", id: nextId++, method: "ping" },
    ];
    // Batches are of 2025-03-26 (and 2024-11-05); 2025-06-18 removed them.
    const answers = await messagesOf(await post(batch, { "mcp-protocol-version": "2025-03-26" }));
    expect(answers.map((a) => a.id).sort()).toEqual([batch[0]!.id, batch[2]!.id].sort());
    const notified = await post({ jsonrpc: "2.0", method: "notifications/roots/list_changed" });
    expect(notified.status).toBe(202);
    expect(await notified.text()).toBe("");
  });

  test("a call that outlasts its turn gets an event stream at once, without a progress token too", async () => {
    // Headers held back to a long job's end would run out clients' header timeouts (undici's is 5 minutes).
    const id = nextId++;
    const since = Date.now();
    const res = await post(call("gemini_run", { prompt: "sleep 1\nhello", workdir: workdir() }, id));
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    // The headers came before the job ended (with PostgreSQL, perhaps before it was even stored).
    const listed = (await server.services.jobs.list({ limit: 50, offset: 0 })).jobs.filter((j) => j.createdAt >= since);
    expect(listed.filter((j) => j.endedAt !== null)).toEqual([]);
    const [answer, ...more] = await messagesOf(res);
    expect(more).toEqual([]);
    expect(answer?.id).toBe(id);
  });

  test("refusals keep the SDK transport's statuses and JSON-RPC shape", async () => {
    const refused = async (res: Response, status: number, code: number, message: RegExp) => {
      expect(res.status).toBe(status);
      const body = (await res.json()) as { jsonrpc: string; id: null; error: { code: number; message: string } };
      expect(body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code } });
      expect(body.error.message).toMatch(message);
    };
    const ping = { jsonrpc: "2.0", id: 1, method: "ping" };
    await refused(await post(ping, { accept: "application/json" }), 406, -32000, /Not Acceptable/);
    await refused(await post(ping, { "content-type": "text/plain" }), 415, -32000, /Unsupported Media Type/);
    await refused(await post(ping, { "mcp-protocol-version": "1999-01-01" }), 400, -32000, /Unsupported protocol version/);
    await refused(await post({ hello: "there" }), 400, -32700, /Invalid JSON-RPC message/);
    await refused(await post([ping]), 400, -32600, /^Invalid Request: MCP 2025-06-18 has no JSON-RPC batches \(removed in 2025-06-18\)/);
    await refused(await post([ping], { "mcp-protocol-version": "2025-11-25" }), 400, -32600, /MCP 2025-11-25 has no JSON-RPC batches/);
    const old = { "mcp-protocol-version": "2025-03-26" };
    const pings = (n: number) => Array.from({ length: n }, (_, i) => ({ ...ping, id: 1000 + i }));
    await refused(await post(pings(17), old), 400, -32600, /a batch holds at most 16 messages \(CORRAL_MCP_MAX_CALLS_PER_SESSION\)/);
    await refused(await post([ping, ping], old), 400, -32600, /request id 1 is already waiting for its answer/);
    const init = {
      jsonrpc: "2.0",
      id: 2,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "w", version: "1" } },
    };
    await refused(await post(init), 400, -32600, /already initialized/);
    const get = (accept: string) =>
      fetch(`${server.url}/mcp`, { headers: { ...server.auth, accept, "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" } });
    await refused(await get("application/json"), 406, -32000, /must accept text\/event-stream/);
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
    const unended = (await server.services.jobs.list({ limit: 50, offset: 0, status: ["queued", "running"] })).jobs;
    expect(unended.map((j) => j.prompt)).toContain("sleep 1\nhello");
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
    await until(async () => (await server.services.jobs.list({ limit: 50, offset: 0, status: ["running"] })).jobs.length === 0 || undefined);
    const id = nextId++;
    const ping = await post({ jsonrpc: "2.0", id, method: "ping" });
    expect(await messagesOf(ping)).toEqual([{ jsonrpc: "2.0", id, result: {} }]);
  });

  test("a session answers at most 16 calls at once; a call whose client left is dropped, its wait with it", async () => {
    const [started] = await messagesOf(await post(call("gemini_run_async", { prompt: "sleep 30\nhello", workdir: workdir() })));
    const job = (started!.result as { content: { text: string }[] }).content[0]!.text.trim();
    const listening = server.services.jobEvents.listenerCount("job");
    const controllers = Array.from({ length: 16 }, () => new AbortController());
    const waits = await Promise.all(
      controllers.map((controller) =>
        fetch(`${server.url}/mcp`, {
          method: "POST",
          signal: controller.signal,
          headers: { ...server.auth, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": sessionId },
          body: JSON.stringify(call("corral_wait", { job_ids: [job], timeout_s: 3600 })),
        }),
      ),
    );
    for (const res of waits) expect(res.headers.get("content-type")).toBe("text/event-stream");
    await until(() => (server.services.jobEvents.listenerCount("job") === listening + 16 ? true : undefined));
    const refused = await post({ jsonrpc: "2.0", id: nextId++, method: "ping" });
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(
      /^Too many calls: this session is answering 16 and takes at most 16 at once \(CORRAL_MCP_MAX_CALLS_PER_SESSION\)/,
    );
    // The clients leave: the waits end in the server (not at their hour's timeout), and the session takes calls again.
    for (const controller of controllers) controller.abort();
    await until(() => (server.services.jobEvents.listenerCount("job") === listening ? true : undefined));
    const id = nextId++;
    expect(await messagesOf(await post({ jsonrpc: "2.0", id, method: "ping" }))).toEqual([{ jsonrpc: "2.0", id, result: {} }]);
    // A lost connection is not a cancel: the job the waits were for goes on (still waiting for its
    // worker's start on a busy machine, or running).
    expect(["queued", "running"]).toContain((await server.services.jobs.get(job)).status);
    await server.services.cancels.cancel(job);
  });

  test("DELETE ends the session: its open GET stream ends and its id is refused after", async () => {
    const init = await post(
      {
        jsonrpc: "2.0",
        id: nextId++,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "w", version: "1" } },
      },
      {},
      "",
    );
    const other = init.headers.get("mcp-session-id")!;
    expect(other).toBeTruthy();
    expect(other).not.toBe(sessionId);
    await init.text();
    const headers = { ...server.auth, "mcp-session-id": other, "mcp-protocol-version": "2025-06-18" };
    const stream = await fetch(`${server.url}/mcp`, { headers: { ...headers, accept: "text/event-stream" } });
    expect(stream.status).toBe(200);
    const deleted = await fetch(`${server.url}/mcp`, { method: "DELETE", headers });
    expect(deleted.status).toBe(200);
    expect(await stream.text()).toBe("");
    const after = await post({ jsonrpc: "2.0", id: nextId++, method: "ping" }, {}, other);
    expect(after.status).toBe(404);
  });
});

/** A tools/call request. */
function call(name: string, args: Record<string, unknown>, id = nextId++) {
  return { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } };
}
