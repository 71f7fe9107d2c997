// Both MCP protocol eras against one server at once (issue 28): an SDK v2 client pinned to
// 2026-07-28 and one on 2025-11-25 each run jobs, register in the hub, message each other and
// read the history; the wire rules of the new era (version, headers) refuse what they should.
import path from "node:path";
import type { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { sleep, startServer, type TestServer, until } from "./helpers.js";
import { connectMcp, textOf } from "./mcp-client.js";

let server: TestServer;
let legacy: Client;
let modern: Client;
beforeAll(async () => {
  server = await startServer({ CORRAL_PROGRESS_INTERVAL_MS: "100" });
  legacy = await connectMcp(server, "/mcp", server.auth, "legacy");
  modern = await connectMcp(server, "/mcp", server.auth, "modern");
});
afterAll(async () => {
  await legacy.close();
  await modern.close();
  await server.close();
});

const call = async (client: Client, name: string, args: Record<string, unknown>) => textOf(await client.callTool({ name, arguments: args }));
const handleOf = (text: string) => /^handle: (\S+)$/m.exec(text)?.[1] ?? "";

/** A raw 2026-07-28 POST, as a client that builds its own requests sends it. */
function modernPost(body: Record<string, unknown>, headers: Record<string, string> = {}, signal?: AbortSignal) {
  return fetch(`${server.url}/mcp`, {
    method: "POST",
    signal,
    headers: {
      ...server.auth,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": String(body.method),
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, ...body }),
  });
}

const envelope = (version = "2026-07-28") => ({
  "io.modelcontextprotocol/protocolVersion": version,
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
});

describe("two eras on one server", () => {
  test("each client runs a job and reads its answer", async () => {
    for (const [client, n] of [
      [legacy, 1],
      [modern, 2],
    ] as const) {
      const id = await call(client, "gemini_run_async", { prompt: `write e${n}.txt ${n}`, workdir: path.join(server.root, `era${n}`) });
      expect(await call(client, "corral_wait", { job_ids: [id], timeout_s: 60 })).toMatch(/^all 1 ended/);
      expect(await call(client, "gemini_done", { job_id: id })).toMatch(/^listo/);
    }
  });

  test("they register in one hub session, message each other and read the history", async () => {
    const legacy = await connectMcp(server, "/mcp?toolsets=hub", server.auth, "legacy");
    const modern = await connectMcp(server, "/mcp?toolsets=hub", server.auth, "modern");
    const old = handleOf(await call(legacy, "corral_register", { name: "old", session: "eras" }));
    const now = handleOf(await call(modern, "corral_register", { name: "new", session: "eras" }));
    expect(await call(legacy, "corral_send", { handle: old, to: "new", text: "from 2025-11-25" })).toMatch(/^sent/);
    expect(await call(modern, "corral_receive", { handle: now, timeout_s: 5 })).toContain("from 2025-11-25");
    expect(await call(modern, "corral_send", { handle: now, to: "old", text: "from 2026-07-28" })).toMatch(/^sent/);
    expect(await call(legacy, "corral_receive", { handle: old, timeout_s: 5 })).toContain("from 2026-07-28");
    const history = await call(modern, "corral_read", { handle: now, agent: "old" });
    expect(history).toContain("from 2025-11-25");
    expect(history).toContain("from 2026-07-28");
    await Promise.all([legacy.close(), modern.close()]);
  });

  test("the 2025-11-25 session still gets progress and tools/list_changed", async () => {
    const progress: number[] = [];
    const run = await legacy.callTool(
      { name: "kiro_run", arguments: { prompt: "sleep 0.6\nhello", workdir: path.join(server.root, "progress") } },
      { onprogress: (p) => progress.push(p.progress) },
    );
    expect(textOf(run)).toMatch(/^ok/);
    expect(progress.length).toBeGreaterThan(0);
    const changed = new Promise<void>((resolve) => legacy.setNotificationHandler("notifications/tools/list_changed", () => resolve()));
    await server.services.agents.create({ name: "both", kind: "command", command: "echo" });
    await changed;
    expect((await modern.listTools()).tools.map((t) => t.name)).toContain("both_run");
  });
});

describe("a call whose answer was lost", () => {
  /** Sends the call `post` makes and closes its stream once its job (in `args.workdir`) runs; resolves to the job's id. */
  async function dropped(args: { workdir: string }, post: (signal: AbortSignal) => Promise<Response>): Promise<string> {
    const controller = new AbortController();
    const answer = post(controller.signal)
      .then((res) => res.text())
      .catch(() => undefined);
    const job = await until(async () =>
      (await server.services.jobs.list({ limit: 50, offset: 0, status: ["running"] })).jobs.find((j) => j.workdir === args.workdir),
    );
    controller.abort();
    await answer;
    // The server hears of the close, and keeps the job for the call to come again.
    await sleep(300);
    return job.id;
  }
  const jobsIn = async (workdir: string) =>
    (await server.services.jobs.list({ limit: 200, offset: 0 })).jobs.filter((j) => j.workdir === workdir).map((j) => j.id);

  test("is taken over by its own client calling again, not by another client making the same call", async () => {
    // The workdir shared: another client's job starts there while the first still runs.
    const args = { prompt: "sleep 1\nlost once", workdir: path.join(server.root, "lost-modern"), shared_workdir: true };
    const lost = await dropped(args, (signal) =>
      modernPost({ method: "tools/call", params: { name: "kiro_run", arguments: args, _meta: envelope() } }, { "mcp-name": "kiro_run" }, signal),
    );
    // Another client (here a 2025-11-25 session) asks for the same: it gets a job of its own, not the one another left.
    const other = await call(legacy, "kiro_run", args);
    expect(other).toMatch(/^ok/);
    expect(other).not.toContain(lost);
    expect(await jobsIn(args.workdir)).toHaveLength(2);
    // The client that lost the answer re-issues its request: it takes its job, and nothing more is launched.
    const res = await modernPost(
      { method: "tools/call", params: { name: "kiro_run", arguments: args, _meta: envelope() } },
      { "mcp-name": "kiro_run" },
    );
    expect(await res.text()).toContain(lost);
    expect(await jobsIn(args.workdir)).toHaveLength(2);
  });

  test("a 2025-11-25 client calling again in its session takes the job its dropped connection left", async () => {
    const sessionId = (legacy.transport as StreamableHTTPClientTransport).sessionId ?? "";
    const args = { prompt: "sleep 1\nlost twice", workdir: path.join(server.root, "lost-legacy"), shared_workdir: true };
    const lost = await dropped(args, (signal) =>
      fetch(`${server.url}/mcp`, {
        method: "POST",
        signal,
        headers: {
          ...server.auth,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-session-id": sessionId,
          "mcp-protocol-version": "2025-11-25",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: "dropped", method: "tools/call", params: { name: "kiro_run", arguments: args } }),
      }),
    );
    // A 2026-07-28 client is another client: its own job.
    const res = await modernPost(
      { method: "tools/call", params: { name: "kiro_run", arguments: args, _meta: envelope() } },
      { "mcp-name": "kiro_run" },
    );
    expect(await res.text()).not.toContain(lost);
    expect(await jobsIn(args.workdir)).toHaveLength(2);
    expect(await call(legacy, "kiro_run", args)).toContain(lost);
    expect(await jobsIn(args.workdir)).toHaveLength(2);
  });
});

describe("the 2026-07-28 wire rules", () => {
  test("server/discover offers 2026-07-28 with the instructions; no 400 first, no session", async () => {
    const res = await modernPost({ method: "server/discover", params: { _meta: envelope() } });
    expect(res.status).toBe(200);
    expect(res.headers.get("mcp-session-id")).toBeNull();
    const { result } = (await res.json()) as { result: { supportedVersions: string[]; instructions: string; resultType: string } };
    expect(result.supportedVersions).toContain("2026-07-28");
    expect(result.instructions).toMatch(/^Corral runs coding agents/);
    expect(result.resultType).toBe("complete");
  });

  test("a version Corral does not serve is -32022, naming the ones it does", async () => {
    const res = await modernPost({ method: "tools/list", params: { _meta: envelope("2099-01-01") } }, { "mcp-protocol-version": "2099-01-01" });
    const body = (await res.json()) as { error: { code: number; message: string; data?: unknown } };
    expect(body.error.code).toBe(-32022);
    expect(JSON.stringify(body.error)).toContain("2026-07-28");
  });

  test("an Mcp-Method header that is not the body's method is refused, and nothing runs", async () => {
    const res = await modernPost(
      { method: "tools/call", params: { name: "gemini_run_async", arguments: { prompt: "never" }, _meta: envelope() } },
      { "mcp-method": "tools/list", "mcp-name": "gemini_run_async" },
    );
    expect(res.status).toBeGreaterThanOrEqual(400);
    const jobs = await server.services.jobs.list({ limit: 200, offset: 0 });
    expect(jobs.jobs.some((j) => j.prompt === "never")).toBe(false);
  });
});

describe("2026-07-28 requests at once", () => {
  test("are bounded as sessions' calls are: past the bound a request is refused with 503, saying what to do", async () => {
    const small = await startServer({ CORRAL_MCP_MAX_SESSIONS: "1", CORRAL_MCP_MAX_CALLS_PER_SESSION: "2" });
    const clients: Client[] = [];
    try {
      const waiter = await connectMcp(small, "/mcp", small.auth, "modern");
      clients.push(waiter);
      const id = await call(waiter, "gemini_run_async", { prompt: "hang", workdir: path.join(small.root, "hang") });
      // Two waits hold both places; they answer once the job ends.
      const waits = [0, 1].map(() => waiter.callTool({ name: "corral_wait", arguments: { job_ids: [id], timeout_s: 60 } }));
      const refused = await until(async () => {
        const res = await fetch(`${small.url}/mcp`, {
          method: "POST",
          headers: {
            ...small.auth,
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/list",
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list", params: { _meta: envelope() } }),
        });
        const text = await res.text();
        return res.status === 503 ? { res, text } : undefined;
      });
      expect(refused.res.headers.get("retry-after")).toBe("5");
      expect(refused.text).toMatch(
        /too many MCP requests at once: 2 are being answered, at most 2 \(CORRAL_MCP_MAX_SESSIONS × CORRAL_MCP_MAX_CALLS_PER_SESSION\)/,
      );
      await small.services.cancels.cancel(id, { door: "rest", client: null });
      for (const wait of waits) expect(textOf(await wait)).toMatch(/^all 1 ended/);
      // The places are free again.
      expect((await waiter.listTools()).tools.length).toBeGreaterThan(3);
    } finally {
      for (const c of clients) await c.close();
      await small.close();
    }
  });
});
