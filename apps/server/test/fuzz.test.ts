import { isFinalStatus } from "@corral/shared";
import { ProtocolError } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, expect, test } from "vitest";
import WebSocket from "ws";
import { startServer, until, type TestServer } from "./helpers.js";
import { connectMcp, textOf } from "./mcp-client.js";

/**
 * Hostile and random input to every door, from a fixed seed so a failure replays: random JSON
 * values, huge and odd Unicode strings, wrong types, prototype-pollution keys. Nothing may crash;
 * every refusal must be a clear error; the server must still answer afterwards.
 */
const SEED = 0x5eed_c0de;
const ITERATIONS = 150;

function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIELDS = [
  "agent",
  "prompt",
  "workdir",
  "model",
  "timeout_s",
  "name",
  "kind",
  "command",
  "args",
  "env",
  "sandbox",
  "enabled",
  "maxConcurrent",
  "timeoutS",
  "sharedWorkdir",
  "maxCostUsd",
  "maxTokens",
  "job_id",
  "job_ids",
  "cursor",
  "limit",
  "tail",
  "status",
  "type",
  "jobId",
  "path",
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "hasOwnProperty",
];
const ODD_STRINGS = [
  "",
  " ",
  "gemini",
  "hang",
  "../../etc/passwd",
  "/etc/shadow",
  "~",
  "~/../../root",
  "%00",
  "\u0000",
  "\ud800",
  "\udfff\ud800",
  "💥🐎",
  "\u202eevil",
  "ﷺ",
  "a\nb\r\nc",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion, sent as a literal
  "${HOME}",
  "$(rm -rf /)",
  "`id`",
  "'; DROP TABLE jobs; --",
  "null",
  "{}",
  "[]",
  "NaN",
  "Infinity",
  "-1",
  "1e309",
  "0x10",
  "__proto__",
  "constructor",
  "x".repeat(5000),
];

function generator(seed: number) {
  const rand = prng(seed);
  const int = (n: number) => Math.floor(rand() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const unicode = (len: number) => {
    let s = "";
    for (let i = 0; i < len; i++)
      s += String.fromCodePoint(pick([int(0x80), 0x80 + int(0x780), 0x4e00 + int(0x5000), 0x1f300 + int(0x300), int(0xd800)]));
    return s;
  };
  const string = (): string => {
    const r = rand();
    if (r < 0.4) return pick(ODD_STRINGS);
    if (r < 0.9) return unicode(int(40));
    return unicode(1) + "y".repeat(int(200_000));
  };
  const value = (depth = 0): unknown => {
    const r = rand();
    if (r < 0.1) return null;
    if (r < 0.2) return rand() < 0.5;
    if (r < 0.35) return pick([0, -1, 1, 2 ** 31, 2 ** 53, -(2 ** 63), 1.5, 1e308, -0, Number.MAX_SAFE_INTEGER + 2]);
    if (r < 0.6 || depth > 3) return string();
    if (r < 0.75) return Array.from({ length: int(6) }, () => value(depth + 1));
    return object(depth + 1);
  };
  const object = (depth = 0): Record<string, unknown> => {
    // Built from JSON text so "__proto__" becomes an own key, as a hostile client would send it.
    const entries = Array.from({ length: int(6) }, () => [rand() < 0.8 ? pick(FIELDS) : string().slice(0, 50), value(depth)] as const);
    return JSON.parse(`{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v) ?? "null"}`).join(",")}}`) as Record<string, unknown>;
  };
  return { rand, int, pick, string, value, object };
}

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ CORRAL_AUTH_FAILURE_LIMIT: "100000" });
});
afterAll(async () => {
  // Random input may have launched real (fake-CLI) jobs: none may outlive the test.
  const { jobs } = await server.services.jobs.list({ limit: 500, offset: 0 });
  await Promise.all(jobs.filter((j) => !isFinalStatus(j.status)).map((j) => server.services.cancels.cancel(j.id)));
  await server.close();
});

/** encodeURIComponent, or raw percent-encoded invalid UTF-8 for a lone surrogate (which it refuses). */
const enc = (s: string) => {
  try {
    return encodeURIComponent(s);
  } catch {
    return "%ED%A0%80%FF";
  }
};

const isJsonObject = (text: string | undefined) => {
  try {
    const v: unknown = JSON.parse(text ?? "");
    return typeof v === "object" && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
};

function expectClearError(status: number, text: string, what: string) {
  expect(status, what).toBeLessThan(500);
  if (status < 400) return;
  const body = JSON.parse(text) as { error?: unknown; field?: unknown };
  expect(typeof body.error, what).toBe("string");
  expect((body.error as string).length, what).toBeGreaterThan(3);
}

test("REST: random bodies, queries and ids get clear 4xx errors, never a crash", async () => {
  const g = generator(SEED);
  const targets: Array<() => { method: string; url: string; body?: string; type?: string }> = [
    () => ({ method: "POST", url: "/api/jobs", body: JSON.stringify(g.rand() < 0.5 ? g.object() : g.value()) }),
    () => ({ method: "POST", url: "/api/agents", body: JSON.stringify(g.rand() < 0.7 ? g.object() : g.value()) }),
    () => ({ method: "PATCH", url: `/api/agents/${enc(g.pick(["gemini", "nope", g.string().slice(0, 60)]))}`, body: JSON.stringify(g.object()) }),
    () => ({
      method: "GET",
      url: `/api/jobs?${new URLSearchParams(Object.entries(g.object()).map(([k, v]): [string, string] => [k, typeof v === "string" ? v : (JSON.stringify(v) ?? "")])).toString()}`,
    }),
    () => ({ method: "GET", url: `/api/jobs/${enc(g.string().slice(0, 300))}` }),
    () => ({ method: "POST", url: `/api/jobs/${enc(g.string().slice(0, 300))}/cancel` }),
    () => ({ method: "GET", url: `/api/jobs/${enc(g.string().slice(0, 40))}/output?cursor=${enc(JSON.stringify(g.value()) ?? "")}` }),
    () => ({
      method: "GET",
      url: `/api/audit?${new URLSearchParams(Object.entries(g.object()).map(([k, v]): [string, string] => [k, typeof v === "string" ? v : (JSON.stringify(v) ?? "")])).toString()}`,
    }),
    () => ({ method: "GET", url: `/api/workdirs/read?path=${enc(g.string().slice(0, 500))}` }),
    () => ({ method: "POST", url: "/api/jobs", body: g.string().slice(0, 3000) }),
    () => ({
      method: "POST",
      url: "/api/jobs",
      body: JSON.stringify(g.object()),
      type: g.pick(["text/plain", "application/x-www-form-urlencoded", "application/json; charset=utf-16", "multipart/form-data"]),
    }),
  ];
  for (let i = 0; i < ITERATIONS * 2; i++) {
    const req = g.pick(targets)();
    const res = await fetch(`${server.url}${req.url.slice(0, 8000)}`, {
      method: req.method,
      headers: { ...server.auth, ...(req.body !== undefined ? { "content-type": req.type ?? "application/json" } : {}) },
      body: req.body,
    });
    const text = await res.text();
    expectClearError(
      res.status,
      text,
      `${req.method} ${req.url.slice(0, 120)} ${req.body?.slice(0, 120) ?? ""} → ${res.status} ${text.slice(0, 200)}`,
    );
    if (res.status === 400 && req.type === undefined && isJsonObject(req.body) && !/__proto__|constructor|prototype/.test(req.body ?? "")) {
      // A schema refusal names the field at fault.
      expect(
        typeof (JSON.parse(text) as { field?: unknown }).field,
        `${req.method} ${req.url} ${(req.body ?? "").slice(0, 200)} → ${text.slice(0, 200)}`,
      ).toBe("string");
    }
  }
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(Object.prototype).not.toHaveProperty("enabled");
  expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
});

test("MCP: random tool arguments give tool errors or invalid-params errors naming the field", async () => {
  const g = generator(SEED + 1);
  const client = await connectMcp(server);
  // Tools that would block on a valid call (_run, corral_wait) are left to the MCP tests.
  const tools = ["gemini_run_async", "gemini_done", "corral_jobs", "corral_logs", "corral_cancel", "corral_agents", "no_such_tool"];
  let refusals = 0;
  for (let i = 0; i < ITERATIONS; i++) {
    const name = g.pick(tools);
    const args = g.object();
    try {
      const result = await client.callTool({ name, arguments: args });
      if (result.isError) {
        refusals++;
        expect(textOf(result).length).toBeGreaterThan(3);
      }
    } catch (err) {
      refusals++;
      if (!(err instanceof ProtocolError)) {
        // The HTTP layer refuses prototype-pollution keys before JSON-RPC sees them, with a JSON-RPC parse error.
        expect(String(err), `${name} ${JSON.stringify(args).slice(0, 200)}`).toMatch(/-32700.*__proto__ or constructor\.prototype/);
        expect(JSON.stringify(args)).toMatch(/__proto__|constructor|prototype/);
        continue;
      }
      const message = (err as ProtocolError).message;
      if ((err as ProtocolError).code === -32602 && name !== "no_such_tool") {
        // The SDK lists the path of each failing field.
        expect(message, message).toMatch(/"path"|Invalid|Required|expected/i);
      }
    }
  }
  expect(refusals).toBeGreaterThan(ITERATIONS / 2);
  // Raw JSON-RPC garbage on the same endpoint.
  for (let i = 0; i < 40; i++) {
    const res = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { ...server.auth, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify(g.rand() < 0.5 ? g.value() : { jsonrpc: "2.0", id: g.value(), method: g.string().slice(0, 50), params: g.value() }),
    });
    expect(res.status).toBeLessThan(500);
    await res.text();
  }
  // The session still works.
  expect((await client.listTools()).tools.length).toBeGreaterThan(3);
  await client.close();
  expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
});

test("WebSocket: random frames get error messages; the connection and server stay up", async () => {
  const g = generator(SEED + 2);
  const socket = new WebSocket(`${server.url.replace(/^http/, "ws")}/api/ws`, { headers: server.auth });
  const received: Array<{ type: string; message?: string; field?: string }> = [];
  socket.on("message", (data) => received.push(JSON.parse(data.toString()) as { type: string }));
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  for (let i = 0; i < ITERATIONS; i++) {
    const r = g.rand();
    if (r < 0.1) socket.send(Buffer.from([0xff, 0x00, 0xfe]));
    // Up to 20,000 UTF-16 units: at most 60 KB of UTF-8, under the 64 KiB frame limit tested below.
    else if (r < 0.3) socket.send(g.string().slice(0, 20_000));
    else
      socket.send(
        JSON.stringify(
          g.rand() < 0.6
            ? {
                ...g.object(),
                type: g.pick([
                  "subscribe_job",
                  "unsubscribe_job",
                  "subscribe_jobs",
                  "subscribe_config_file",
                  "unsubscribe_config_file",
                  "nope",
                  g.string().slice(0, 20),
                ]),
              }
            : g.value(),
        ).slice(0, 20_000),
      );
  }
  // Replies come in order: once the answer to this last frame is in, every earlier one is too.
  const sentinel = "fuzzend00000";
  socket.send(JSON.stringify({ type: "subscribe_job", jobId: sentinel, cursor: 0 }));
  await until(() => received.find((m) => m.type === "error" && m.message === `job ${sentinel} not found`), 10_000, "the answer to the last frame");
  const noise = received.length;
  socket.send(JSON.stringify({ type: "subscribe_jobs" }));
  await until(() => received.slice(noise).find((m) => m.type === "subscribed"), 10_000, "the subscription after the noise");
  const errors = received.filter((m) => m.type === "error");
  expect(errors.length).toBeGreaterThan(ITERATIONS / 2);
  for (const e of errors) expect(typeof e.message).toBe("string");
  expect(errors.filter((e) => typeof e.field === "string").length).toBe(errors.length);
  expect(socket.readyState).toBe(WebSocket.OPEN);
  // A frame over the limit closes that connection only (1009, message too big).
  const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));
  socket.send("z".repeat(200 * 1024));
  expect(await closed).toBe(1009);
  expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
});
