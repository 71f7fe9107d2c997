import { readFileSync } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { sleep, startServer, until, type TestServer } from "./helpers.js";
import { connectMcp, TEST_MCP_ERA, textOf } from "./mcp-client.js";

let server: TestServer;
let client: Client;
beforeAll(async () => {
  server = await startServer({ CORRAL_PROGRESS_INTERVAL_MS: "100" });
  client = await connectMcp(server);
});
afterAll(async () => {
  await client.close();
  await server.close();
});

const call = async (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args });
let workdirs = 0;
/** A fresh workdir per job: a busy one is refused unless the job shares it. */
const workdir = () => path.join(server.root, `mcp-work-${++workdirs}`);

describe("/mcp", () => {
  test("lists every agent's three tools and the corral tools", async () => {
    const names = (await client.listTools()).tools.map((t) => t.name);
    for (const agent of ["gemini", "opencode", "claude", "codex", "kiro"]) {
      expect(names).toEqual(expect.arrayContaining([`${agent}_run`, `${agent}_run_async`, `${agent}_done`]));
    }
    expect(names).toEqual(expect.arrayContaining(["corral_agents", "corral_jobs", "corral_wait", "corral_cancel", "corral_logs"]));
    const run = (await client.listTools()).tools.find((t) => t.name === "gemini_run");
    // The common options; the rest are shown with ?options=all (mcp-surface.test.ts).
    expect(Object.keys(run?.inputSchema.properties ?? {})).toEqual(["prompt", "workdir", "model", "session"]);
    expect(run?.inputSchema.required).toEqual(["prompt"]);
  });

  test("_run_async gives the bare id; _done says pendiente, then listo with the file", async () => {
    const dir = workdir();
    const started = await call("gemini_run_async", { prompt: "sleep 0.5\nwrite result.txt 42", workdir: dir });
    const id = textOf(started);
    expect(id).toMatch(/^[a-z0-9]{12}$/);
    expect(textOf(await call("gemini_done", { job_id: id }))).toMatch(/^pendiente\n/);
    const done = await until(async () => {
      const text = textOf(await call("gemini_done", { job_id: id }));
      return text.startsWith("pendiente") ? undefined : text;
    });
    expect(done).toMatch(/^listo\n/);
    expect(done).toContain("wrote result.txt");
    expect(readFileSync(path.join(dir, "result.txt"), "utf8")).toBe("42");
  });

  test("_run waits, reports progress, and answers ok", async () => {
    const progress: number[] = [];
    const result = await client.callTool(
      { name: "kiro_run", arguments: { prompt: "sleep 0.6\nhello", workdir: workdir() } },
      {
        onprogress: (p) => progress.push(p.progress),
      },
    );
    const text = textOf(result);
    expect(text).toMatch(/^ok\n/);
    expect(text).toContain("hello");
    expect(progress.length).toBeGreaterThan(0);
  });

  test("a failing worker gives error: with its exit code and stderr tail", async () => {
    const id = textOf(await call("gemini_run_async", { prompt: "stderr invalid api key\nexit 2", workdir: workdir() }));
    await call("corral_wait", { job_ids: [id], timeout_s: 20 });
    const text = textOf(await call("gemini_done", { job_id: id }));
    expect(text).toMatch(/^error: exit code 2\n/);
    expect(text).toContain("invalid api key");
    const run = textOf(await call("gemini_run", { prompt: "exit 5", workdir: workdir() }));
    expect(run).toMatch(/^error: exit code 5/);
  });

  test("an unknown job id is no encontrado", async () => {
    const result = await call("gemini_done", { job_id: "zzzzzzzzzzzz" });
    expect(textOf(result)).toBe("error: job zzzzzzzzzzzz no encontrado");
  });

  test("corral_wait blocks until all end, then lists them", async () => {
    const ids = await Promise.all(
      [0.2, 0.4, 0.6].map(async (s) => textOf(await call("claude_run_async", { prompt: `sleep ${s}`, workdir: workdir() }))),
    );
    const text = textOf(await call("corral_wait", { job_ids: ids, timeout_s: 30 }));
    expect(text.split("\n")[0]).toBe("all 3 ended");
    for (const id of ids) expect(text).toContain(`${id} · claude · listo`);
  });

  test("corral_wait returns at its timeout with what is still running", async () => {
    const id = textOf(await call("gemini_run_async", { prompt: "hang", workdir: workdir() }));
    const text = textOf(await call("corral_wait", { job_ids: [id], timeout_s: 1 }));
    expect(text).toMatch(/^1 of 1 still running after 1 s/);
    expect(text).toContain(`${id} · gemini · pendiente`);
    const cancelled = textOf(await call("corral_cancel", { job_id: id }));
    expect(cancelled).toBe(`${id}: cancelled`);
    expect(textOf(await call("gemini_done", { job_id: id }))).toMatch(/^error: cancelled/);
  });

  test.runIf(TEST_MCP_ERA === "legacy")("cancelling a _run request cancels its job", async () => {
    const controller = new AbortController();
    const pending = client
      .callTool({ name: "gemini_run", arguments: { prompt: "hang", workdir: workdir() } }, { signal: controller.signal })
      .catch((err: unknown) => err);
    const job = await until(async () =>
      (await server.services.jobs.list({ limit: 50, offset: 0, status: ["running"] })).jobs.find((j) => j.prompt === "hang"),
    );
    controller.abort();
    await pending;
    const ended = await until(async () => {
      const now = await server.services.jobs.get(job.id);
      return now.status === "running" ? undefined : now;
    });
    expect(ended.status).toBe("cancelled");
  });

  test.runIf(TEST_MCP_ERA === "modern")("a 2026-07-28 _run whose stream closes keeps its job, and the call re-issued takes it", async () => {
    const args = { prompt: "hang", workdir: workdir() };
    const controller = new AbortController();
    const pending = client.callTool({ name: "gemini_run", arguments: args }, { signal: controller.signal }).catch((err: unknown) => err);
    const job = await until(async () =>
      (await server.services.jobs.list({ limit: 50, offset: 0, status: ["running"] })).jobs.find((j) => j.prompt === "hang"),
    );
    controller.abort();
    await pending;
    // Closing the stream is how a 2026-07-28 client gives a request up, and a dropped stream looks the same.
    await sleep(500);
    expect((await server.services.jobs.get(job.id)).status).toBe("running");
    // The same call again (keys in another order) waits for that job rather than starting a second one.
    const again = client.callTool({ name: "gemini_run", arguments: { workdir: args.workdir, prompt: "hang" } });
    await sleep(300);
    expect(textOf(await call("corral_cancel", { job_id: job.id }))).toBe(`${job.id}: cancelled`);
    expect(textOf(await again)).toMatch(new RegExp(`^error: cancelled[\\s\\S]*^job ${job.id} ·`, "m"));
    const hangs = (await server.services.jobs.list({ limit: 200, offset: 0 })).jobs.filter((j) => j.workdir === args.workdir);
    expect(hangs.map((j) => j.id)).toEqual([job.id]);
  });

  test("corral_logs gives the tail, or pages from a cursor", async () => {
    const id = textOf(await call("kiro_run_async", { prompt: "print 300", workdir: workdir() }));
    await call("corral_wait", { job_ids: [id], timeout_s: 20 });
    const tail = textOf(await call("corral_logs", { job_id: id, tail: 30 }));
    const lines = tail.split("\n").slice(1, -1);
    expect(lines).toHaveLength(30);
    expect(lines[0]).toBe("line 272");
    expect(lines.at(-1)).toBe("done kiro-cli-chat");
    const page = textOf(await call("corral_logs", { job_id: id, cursor: 0 }));
    expect(page).toContain("line 1\n");
    expect(page).toContain("--- end of output ---");
  });

  test("corral_logs' tail counts lines, so a JSON-mode job's tail is whole events; max_chars drops older lines, never cuts one", async () => {
    const id = textOf(await call("gemini_run_async", { prompt: "write a.txt 1\nwrite b.txt 2\nhello", workdir: workdir() }));
    await call("corral_wait", { job_ids: [id], timeout_s: 20 });
    const events = (text: string) => text.split("\n").slice(1).filter(Boolean);
    const three = events(textOf(await call("corral_logs", { job_id: id, tail: 3 })));
    expect(three).toHaveLength(3);
    for (const line of three) expect(() => JSON.parse(line)).not.toThrow();
    const all = events(textOf(await call("corral_logs", { job_id: id, tail: 1000 })));
    const capped = events(textOf(await call("corral_logs", { job_id: id, tail: 1000, max_chars: 600 })));
    expect(capped.length).toBeGreaterThan(0);
    expect(capped.length).toBeLessThan(all.length);
    expect(capped).toEqual(all.slice(-capped.length));
    expect(capped.join("\n").length).toBeLessThanOrEqual(600);
    const bad = await call("corral_logs", { job_id: id, tail: 0 });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toContain("tail");
  });

  test("corral_wait names each job's changed files under its line, as _done does", async () => {
    const dir = workdir();
    const first = textOf(await call("gemini_run_async", { prompt: "write a.txt 1\nwrite b.txt 22", workdir: dir }));
    const second = textOf(await call("kiro_run_async", { prompt: "write c.txt 333", workdir: workdir() }));
    const text = textOf(await call("corral_wait", { job_ids: [first, second], timeout_s: 30 }));
    const lines = text.split("\n");
    const at = lines.findIndex((l) => l.startsWith(first));
    expect(lines[at]).toContain("files: 2 created");
    expect(lines[at + 1]).toBe("  created: a.txt (1 B), b.txt (2 B)");
    const next = lines.findIndex((l) => l.startsWith(second));
    expect(lines[next + 1]).toBe("  created: c.txt (3 B)");
  });

  test("corral_agents and corral_jobs describe the registry", async () => {
    const agents = textOf(await call("corral_agents", {}));
    expect(agents).toContain("gemini (gemini) · model gemini-2.5-flash");
    expect(agents).toMatch(/gemini .*· available/);
    const jobs = textOf(await call("corral_jobs", { agent: "gemini", limit: 2 }));
    expect(jobs).toMatch(/^\d+ job\(s\), newest 2 shown/);
  });

  test("bad arguments are refused, naming the field", async () => {
    const missing = await call("gemini_run_async", { workdir: workdir() });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/prompt/);
    const wrongType = await call("gemini_run_async", { prompt: "x", timeout_s: "soon" });
    expect(wrongType.isError).toBe(true);
    expect(textOf(wrongType)).toMatch(/timeout_s/);
    const outside = await call("gemini_run_async", { prompt: "x", workdir: "/etc" });
    expect(outside.isError).toBe(true);
    expect(textOf(outside)).toMatch(/^error: workdir: \/etc is outside the allowed workdir roots/);
    const wait = await call("corral_wait", { job_ids: [] });
    expect(wait.isError).toBe(true);
    expect(textOf(wait)).toMatch(/job_ids/);
  });

  test("the tool list follows the agents", async () => {
    const changed = new Promise<void>((resolve) => client.setNotificationHandler("notifications/tools/list_changed", () => resolve()));
    // A 2025-11-25 session hears of it unasked; a 2026-07-28 client listens for it.
    const listening = TEST_MCP_ERA === "modern" ? await client.listen({ toolsListChanged: true }) : undefined;
    await server.services.agents.create({ name: "dot", kind: "command", command: "echo" });
    await changed;
    await listening?.close();
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("dot_run_async");
    await server.services.agents.update("dot", { enabled: false });
    await until(async () => ((await client.listTools()).tools.some((t) => t.name === "dot_run") ? undefined : true));
  });
});

describe("/mcp/<agent>", () => {
  test("serves that agent's three tools only, keeping pyCorral's names", async () => {
    const gemini = await connectMcp(server, "/mcp/gemini");
    expect((await gemini.listTools()).tools.map((t) => t.name).sort()).toEqual(["gemini_done", "gemini_run", "gemini_run_async"]);
    const id = textOf(await gemini.callTool({ name: "gemini_run_async", arguments: { prompt: "hi", workdir: workdir() } }));
    await server.services.waits.waitFor([id], 10_000);
    expect(textOf(await gemini.callTool({ name: "gemini_done", arguments: { job_id: id } }))).toMatch(/^listo/);
    await gemini.close();
  });

  test("an unknown agent's mount answers 404", async () => {
    // A client pinned to 2026-07-28 says only that the server did not offer it (its probe got the 404).
    await expect(connectMcp(server, "/mcp/nobody")).rejects.toThrow(TEST_MCP_ERA === "modern" ? /did not offer/ : /404|no enabled agent/);
  });

  test("a disabled agent's mount answers 404 from the next request on, and serves again once it is enabled", async () => {
    await server.services.agents.create({ name: "mounted", kind: "command", command: "echo" });
    const mounted = await connectMcp(server, "/mcp/mounted");
    expect((await mounted.listTools()).tools.map((t) => t.name)).toContain("mounted_done");
    await server.services.agents.update("mounted", { enabled: false });
    await expect(mounted.listTools()).rejects.toThrow(/404|no enabled agent/);
    await expect(connectMcp(server, "/mcp/mounted")).rejects.toThrow(TEST_MCP_ERA === "modern" ? /did not offer/ : /404|no enabled agent/);
    await server.services.agents.update("mounted", { enabled: true });
    const again = await connectMcp(server, "/mcp/mounted");
    expect((await again.listTools()).tools.map((t) => t.name)).toContain("mounted_done");
    await again.close();
    await mounted.close().catch(() => undefined);
  });

  test("a session id from another mount is refused", async () => {
    const res = await fetch(`${server.url}/mcp/gemini`, {
      method: "POST",
      headers: { ...server.auth, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": "nope" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(res.status).toBe(404);
  });
});

describe("sessions", () => {
  const initialize = (s: TestServer) =>
    fetch(`${s.url}/mcp`, {
      method: "POST",
      headers: { ...s.auth, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
      }),
    });

  test("an idle session expires; its id is then refused with 404 so the client starts over", async () => {
    const short = await startServer({ CORRAL_MCP_SESSION_IDLE_S: "1" });
    try {
      const res = await initialize(short);
      const sessionId = res.headers.get("mcp-session-id") ?? "";
      await res.text();
      expect(sessionId).not.toBe("");
      await sleep(2500);
      const late = await fetch(`${short.url}/mcp`, {
        method: "POST",
        headers: { ...short.auth, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": sessionId },
        body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
      });
      expect(late.status).toBe(404);
    } finally {
      await short.close();
    }
  });

  test("shutdown closes an open SSE stream at once", async () => {
    const s = await startServer();
    const res = await initialize(s);
    const sessionId = res.headers.get("mcp-session-id") ?? "";
    await res.text();
    const stream = await fetch(`${s.url}/mcp`, { headers: { ...s.auth, accept: "text/event-stream", "mcp-session-id": sessionId } });
    expect(stream.status).toBe(200);
    const reading = stream.text().then(
      () => "ended",
      () => "ended",
    );
    // Without forceCloseConnections this close would wait for the client, and the test would time out.
    await s.close();
    expect(await reading).toBe("ended");
  });
});

describe("_done on a job launched a moment ago", () => {
  let lingering: TestServer;
  let lingeringClient: Client;
  beforeAll(async () => {
    // The linger (50 ms) made long, so what it does shows without a race against the clock.
    lingering = await startServer({}, { config: (config) => ({ ...config, doneLingerMs: 30_000 }) });
    lingeringClient = await connectMcp(lingering);
  });
  afterAll(async () => {
    await lingeringClient.close();
    await lingering.close();
  });

  test("waits for its end, so one call answers listo", async () => {
    const ask = async (name: string, args: Record<string, unknown>) => textOf(await lingeringClient.callTool({ name, arguments: args }));
    const dir = path.join(lingering.root, "linger");
    const id = await ask("gemini_run_async", { prompt: "sleep 0.5\nwrite result.txt 42", workdir: dir });
    expect(await ask("gemini_done", { job_id: id })).toMatch(/^listo\n/);
    expect(readFileSync(path.join(dir, "result.txt"), "utf8")).toBe("42");
  });
});

describe("_done past the linger", () => {
  test("a job still running when the linger is over is pendiente", async () => {
    const short = await startServer({}, { config: (config) => ({ ...config, doneLingerMs: 200 }) });
    const shortClient = await connectMcp(short);
    try {
      const ask = async (name: string, args: Record<string, unknown>) => textOf(await shortClient.callTool({ name, arguments: args }));
      const id = await ask("gemini_run_async", { prompt: "sleep 30", workdir: path.join(short.root, "long") });
      expect(await ask("gemini_done", { job_id: id })).toMatch(/^pendiente\n/);
      await ask("corral_cancel", { job_id: id });
    } finally {
      await shortClient.close();
      await short.close();
    }
  });
});
