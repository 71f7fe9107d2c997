import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, rmSync, symlinkSync } from "node:fs";
import { request as httpRequest } from "node:http";
import path from "node:path";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import type { AuditList, Job } from "@corral/shared";
import { afterEach, describe, expect, test } from "vitest";
import WebSocket from "ws";
import { ConfigError, loadConfig } from "../src/config.js";
import { api, signIn, startServer, tempDir, until, type TestServer } from "./helpers.js";
import { connectMcp, textOf } from "./mcp-client.js";

const serverDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

let servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});
async function start(env: Record<string, string> = {}, options: Parameters<typeof startServer>[1] = {}): Promise<TestServer> {
  const server = await startServer(env, options);
  servers.push(server);
  return server;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Opens /api/ws and resolves with the HTTP status of the upgrade: 101 when it opened. */
function upgradeStatus(server: TestServer, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const socket = new WebSocket(`${server.url.replace(/^http/, "ws")}/api/ws`, { headers });
  return new Promise((resolve, reject) => {
    socket.once("open", () => {
      socket.close();
      resolve({ status: 101, body: "" });
    });
    socket.once("unexpected-response", (req, res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c.toString()));
      res.on("end", () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    socket.once("error", (err) => {
      if (socket.readyState !== WebSocket.CLOSED) reject(err);
    });
  });
}

describe("failed-auth rate limiting", () => {
  test("after N wrong tokens an address gets 429 with Retry-After; missing tokens do not count", async () => {
    const server = await start({ CORRAL_AUTH_FAILURE_LIMIT: "3", CORRAL_AUTH_FAILURE_WINDOW_S: "120" });
    for (let i = 0; i < 5; i++) expect((await fetch(`${server.url}/api/jobs`)).status).toBe(401);
    expect((await fetch(`${server.url}/api/jobs`, { headers: server.auth })).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${server.url}/api/jobs`, { headers: bearer(`wrong-token-${i}-0123456789`) });
      expect(res.status).toBe(401);
    }
    const limited = await fetch(`${server.url}/mcp`, { method: "POST", headers: bearer("wrong-token-x-0123456789") });
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(120);
    expect(((await limited.json()) as { error: string }).error).toMatch(/too many wrong tokens.*CORRAL_AUTH_FAILURE_LIMIT/);
    // Wrong tokens stay blocked; the right one is never refused, so nobody can lock the owner out.
    expect((await fetch(`${server.url}/api/jobs`, { headers: bearer("wrong-token-y-0123456789") })).status).toBe(429);
    expect((await fetch(`${server.url}/api/jobs`, { headers: server.auth })).status).toBe(200);
    expect((await upgradeStatus(server, bearer(server.token))).status).toBe(101);
    expect((await fetch(`${server.url}/jobs?token=${server.token}`, { redirect: "manual" })).status).toBe(302);
    // Health stays open.
    expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
  });

  test("wrong tokens in the page URL count too", async () => {
    const server = await start({ CORRAL_AUTH_FAILURE_LIMIT: "2" });
    for (let i = 0; i < 2; i++) expect((await fetch(`${server.url}/?token=guess-${i}`, { redirect: "manual" })).status).not.toBe(302);
    expect((await fetch(`${server.url}/?token=guess-3`, { redirect: "manual" })).status).toBe(429);
  });
});

describe("binding", () => {
  test("a non-loopback CORRAL_HOST without CORRAL_TOKEN is refused, naming the settings", () => {
    for (const host of ["0.0.0.0", "::", "192.168.1.20", "corral.lan"]) {
      expect(() => loadConfig({ CORRAL_HOST: host })).toThrow(ConfigError);
      expect(() => loadConfig({ CORRAL_HOST: host })).toThrow(/CORRAL_HOST=.*CORRAL_TOKEN/);
      expect(loadConfig({ CORRAL_HOST: host, CORRAL_TOKEN: "a-long-enough-secret" }).host).toBe(host);
    }
    for (const host of ["127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"]) expect(loadConfig({ CORRAL_HOST: host }).host).toBe(host);
  });

  test("the server process exits at start with the message", async () => {
    const root = tempDir();
    const child = spawn(process.execPath, ["--import", "tsx", "--conditions=corral-source", "src/server.ts"], {
      cwd: serverDir,
      env: { ...process.env, CORRAL_HOST: "0.0.0.0", CORRAL_TOKEN: "", CORRAL_PORT: "0", CORRAL_DATA_DIR: path.join(root, "data") },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect(code).toBe(1);
    expect(stderr).toMatch(/Refusing to listen on CORRAL_HOST=0\.0\.0\.0 without CORRAL_TOKEN/);
  });

  test("a port in use is named, with the setting to change", async () => {
    const busy = await start();
    const root = tempDir();
    const child = spawn(process.execPath, ["--import", "tsx", "--conditions=corral-source", "src/server.ts"], {
      cwd: serverDir,
      env: { ...process.env, CORRAL_PORT: new URL(busy.url).port, CORRAL_TOKEN: "a-long-enough-secret", CORRAL_DATA_DIR: path.join(root, "data") },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    rmSync(root, { recursive: true, force: true });
    expect(code).toBe(1);
    expect(stderr.trim()).toBe("Corral could not start: the port is in use (another Corral?). Stop it, or choose another port with CORRAL_PORT.");
  });

  test("the server's environment that workers' environments are picked from holds none of Corral's settings", () => {
    const config = loadConfig({ CORRAL_TOKEN: "a-long-enough-secret", CORRAL_DATABASE_URL: "postgres://u:pw@h/db", OTHER: "kept" });
    expect(Object.keys(config.serverEnv).filter((name) => name.startsWith("CORRAL"))).toEqual([]);
    expect(config.serverEnv.OTHER).toBe("kept");
  });
});

describe("the WebSocket upgrade passes the same guard", () => {
  test("token, Host and Origin are checked before the upgrade", async () => {
    const server = await start();
    const host = new URL(server.url).host;
    const none = await upgradeStatus(server, {});
    expect(none.status).toBe(401);
    expect(JSON.parse(none.body)).toMatchObject({ error: expect.stringMatching(/missing token/) });
    expect((await upgradeStatus(server, bearer("wrong-token-0123456789"))).status).toBe(401);
    const foreign = await upgradeStatus(server, { ...server.auth, origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toMatch(/Origin/);
    expect((await upgradeStatus(server, { ...server.auth, host: "attacker.example" })).status).toBe(403);
    // The owner gets in with the header, or with the panel's cookie from its own origin.
    expect((await upgradeStatus(server, server.auth)).status).toBe(101);
    expect((await upgradeStatus(server, { cookie: await signIn(server), origin: `http://${host}` })).status).toBe(101);
  });
});

describe("CORS", () => {
  test("without CORRAL_ALLOWED_ORIGINS no CORS header is ever sent", async () => {
    const server = await start();
    const host = new URL(server.url).host;
    const same = await fetch(`${server.url}/api/jobs`, { headers: { ...server.auth, origin: `http://${host}` } });
    expect(same.status).toBe(200);
    expect(same.headers.get("access-control-allow-origin")).toBeNull();
    const preflight = await fetch(`${server.url}/api/jobs`, {
      method: "OPTIONS",
      headers: { origin: "https://tools.example", "access-control-request-method": "POST" },
    });
    expect(preflight.status).toBe(403);
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
  });

  test("with it, only the listed origins get CORS, and only with the token in a header", async () => {
    const server = await start({ CORRAL_ALLOWED_ORIGINS: "https://tools.example" });
    const preflight = await fetch(`${server.url}/api/jobs`, {
      method: "OPTIONS",
      headers: {
        origin: "https://tools.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("https://tools.example");
    expect(preflight.headers.get("access-control-allow-headers")).toMatch(/authorization/);
    // Every method the REST API uses (PUT: /api/costs/prices).
    const methods = preflight.headers.get("access-control-allow-methods")?.split(/,\s*/) ?? [];
    for (const m of ["GET", "POST", "PUT", "PATCH", "DELETE"]) expect(methods, m).toContain(m);
    expect(preflight.headers.get("access-control-allow-credentials")).toBeNull();
    const get = await fetch(`${server.url}/api/jobs`, { headers: { ...server.auth, origin: "https://tools.example" } });
    expect(get.status).toBe(200);
    expect(get.headers.get("access-control-allow-origin")).toBe("https://tools.example");
    // Still the token: CORS only lets the page read answers it was allowed to get.
    expect((await fetch(`${server.url}/api/jobs`, { headers: { origin: "https://tools.example" } })).status).toBe(401);
    const other = await fetch(`${server.url}/api/jobs`, {
      method: "OPTIONS",
      headers: { origin: "https://evil.example", "access-control-request-method": "POST" },
    });
    expect(other.status).toBe(403);
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("size limits and the file API", () => {
  test("bodies over CORRAL_BODY_LIMIT_BYTES get a clear 413 on REST and MCP", async () => {
    const server = await start({ CORRAL_BODY_LIMIT_BYTES: "4096" });
    const big = { agent: "gemini", prompt: "x".repeat(8000) };
    const rest = await api<{ error: string }>(server, "POST", "/api/jobs", big);
    expect(rest.status).toBe(413);
    expect(rest.body.error).toMatch(/limit is 4096 bytes \(CORRAL_BODY_LIMIT_BYTES\)/);
    const mcp = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { ...server.auth, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { padding: "y".repeat(8000) } }),
    });
    expect(mcp.status).toBe(413);
    expect((await server.services.jobs.list({ limit: 10, offset: 0 })).total).toBe(0);
  });

  test("FIFOs, devices, sockets and links out of the workdir are refused", async () => {
    const server = await start();
    const workdir = path.join(server.root, "wd");
    mkdirSync(workdir);
    expect((await api(server, "POST", "/api/agents", { name: "files", kind: "command", command: "/bin/true", workdir })).status).toBe(201);
    execFileSync("mkfifo", [path.join(workdir, "pipe")]);
    symlinkSync("/dev/zero", path.join(workdir, "zero"));
    symlinkSync("/etc/hostname", path.join(workdir, "out"));
    const read = (p: string) => api<{ error: string; field: string }>(server, "GET", `/api/workdirs/read?path=${encodeURIComponent(p)}`);
    const fifo = await read(path.join(workdir, "pipe"));
    expect(fifo.status).toBe(400);
    expect(fifo.body).toMatchObject({ field: "path", error: expect.stringMatching(/not a regular file/) });
    expect((await read(path.join(workdir, "zero"))).status).toBe(404);
    expect((await read(path.join(workdir, "out"))).status).toBe(404);
    expect((await read(path.join(workdir, "..", "..", "etc", "hostname"))).status).toBeGreaterThanOrEqual(400);
  });
});

describe("logs", () => {
  test("never contain the token or agents' env values, and carry job ids", async () => {
    const stream = new PassThrough();
    let captured = "";
    stream.on("data", (c: Buffer) => (captured += c.toString()));
    const secret = "sk-live-SECRET-value-9f8e7d6c";
    const server = await start({ CORRAL_LOG_LEVEL: "trace", API_KEY_FROM_SERVER_ENV: "server-env-secret-42" }, { logStream: stream });
    const workdir = path.join(server.root, "wd");
    mkdirSync(workdir);
    const created = await api<{ env: Record<string, string> }>(server, "POST", "/api/agents", {
      name: "keyed",
      kind: "command",
      command: "/bin/sh",
      args: ["-c", "echo working; exit 3"],
      workdir,
      env: { OPENAI_API_KEY: secret },
    });
    // The owner still sees their agent's env over REST.
    expect(created.body.env.OPENAI_API_KEY).toBe(secret);
    const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "keyed", prompt: "go" });
    expect(launched.status).toBe(201);
    await server.services.waits.waitFor([launched.body.id], 20_000);
    await fetch(`${server.url}/api/jobs`, { headers: bearer("wrong-token-0123456789") });
    await fetch(`${server.url}/?token=${server.token}`, { redirect: "manual" });
    await fetch(`${server.url}/api/jobs`, { headers: { cookie: `corral_token=${server.token}` } });
    await api(server, "PATCH", "/api/agents/keyed", { env: { OPENAI_API_KEY: secret, MORE: secret } });
    server.app.log.info(
      { agent: { env: { OPENAI_API_KEY: secret } }, token: server.token, headers: { authorization: `Bearer ${server.token}` } },
      "a careless line",
    );
    await until(() => (captured.includes(`job ${launched.body.id} ended`) ? true : undefined), 5000, "the job's end in the log");

    expect(captured).not.toContain(server.token);
    expect(captured).not.toContain(secret);
    expect(captured).not.toContain("server-env-secret-42");
    const lines = captured
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const ofJob = lines.filter((l) => l.jobId === launched.body.id);
    expect(ofJob.map((l) => l.msg)).toEqual(
      expect.arrayContaining([`job ${launched.body.id} launched`, `job ${launched.body.id} started`, `job ${launched.body.id} ended: failed`]),
    );
    const ended = ofJob.find((l) => l.msg === `job ${launched.body.id} ended: failed`);
    expect(ended).toMatchObject({ agent: "keyed", status: "failed", exitCode: 3 });
    expect(typeof ended?.durationMs).toBe("number");
    expect(lines.find((l) => l.msg === "a careless line")).toMatchObject({ token: "[redacted]" });
  });
});

describe("audit trail and metrics", () => {
  test("who launched and cancelled what, through which door and client", async () => {
    const server = await start();
    const workdir = path.join(server.root, "wd");
    const rest = await fetch(`${server.url}/api/jobs`, {
      method: "POST",
      headers: { ...server.auth, "content-type": "application/json", "user-agent": "curl/8.5.0" },
      body: JSON.stringify({ agent: "gemini", prompt: "hang", workdir: path.join(workdir, "a") }),
    });
    const restJob = (await rest.json()) as Job;
    const panel = await fetch(`${server.url}/api/jobs`, {
      method: "POST",
      headers: { ...server.auth, "content-type": "application/json", "x-corral-client": "panel" },
      body: JSON.stringify({ agent: "gemini", prompt: "hello", workdir: path.join(workdir, "b") }),
    });
    const panelJob = (await panel.json()) as Job;
    const client = await connectMcp(server);
    const mcpJobId = textOf(await client.callTool({ name: "gemini_run_async", arguments: { prompt: "hang", workdir: path.join(workdir, "c") } }));
    await until(async () => ((await server.services.jobs.get(restJob.id)).status === "running" ? true : undefined));
    await client.callTool({ name: "corral_cancel", arguments: { job_id: restJob.id } });
    const cancelled = await fetch(`${server.url}/api/jobs/${mcpJobId}/cancel`, {
      method: "POST",
      headers: { ...server.auth, "user-agent": "my-script/2" },
    });
    expect(cancelled.status).toBe(200);
    await client.close();

    const audit = await api<AuditList>(server, "GET", "/api/audit");
    expect(audit.status).toBe(200);
    const rows = audit.body.entries.map(({ action, jobId, door, client: c, agent }) => ({ action, jobId, door, client: c, agent }));
    expect(rows).toEqual([
      { action: "cancel", jobId: mcpJobId, door: "rest", client: "my-script/2", agent: "gemini" },
      { action: "cancel", jobId: restJob.id, door: "mcp", client: "corral-test/1.0.0", agent: "gemini" },
      { action: "launch", jobId: mcpJobId, door: "mcp", client: "corral-test/1.0.0", agent: "gemini" },
      { action: "launch", jobId: panelJob.id, door: "panel", client: "panel", agent: "gemini" },
      { action: "launch", jobId: restJob.id, door: "rest", client: "curl/8.5.0", agent: "gemini" },
    ]);
    expect(audit.body.total).toBe(5);
    const one = await api<AuditList>(server, "GET", `/api/audit?jobId=${restJob.id}`);
    expect(one.body.entries.map((e) => e.action)).toEqual(["cancel", "launch"]);
    const bad = await api<{ field: string }>(server, "GET", "/api/audit?limit=-1");
    expect(bad.status).toBe(400);
    expect(bad.body.field).toBe("limit");
  });

  test("/metrics needs the token and exposes jobs by status, queue depth, durations and memory", async () => {
    const server = await start();
    expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
    const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "gemini", prompt: "hello", workdir: path.join(server.root, "m") });
    await server.services.waits.waitFor([launched.body.id], 20_000);
    await fetch(`${server.url}/metrics`, { headers: bearer("wrong-token-0123456789") });
    const res = await fetch(`${server.url}/metrics`, { headers: server.auth });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toMatch(/^# TYPE corral_jobs gauge$/m);
    expect(text).toMatch(/^corral_jobs\{status="succeeded"\} 1$/m);
    expect(text).toMatch(/^corral_jobs\{status="queued"\} 0$/m);
    expect(text).toMatch(/^corral_queue_depth 0$/m);
    expect(text).toMatch(/^# TYPE corral_job_duration_seconds histogram$/m);
    expect(text).toMatch(/^corral_job_duration_seconds_bucket\{agent="gemini",status="succeeded",le="\+Inf"\} 1$/m);
    expect(text).toMatch(/^corral_job_duration_seconds_count\{agent="gemini",status="succeeded"\} 1$/m);
    expect(text).toMatch(/^corral_auth_failures_total 1$/m);
    expect(text).toMatch(/^process_resident_memory_bytes \d+$/m);
    // Every sample line is `name{labels} value`, as Prometheus parses it.
    for (const line of text
      .trim()
      .split("\n")
      .filter((l) => !l.startsWith("#"))) {
      expect(line).toMatch(/^[a-z_:][a-z0-9_:]*(\{[^}]*\})? -?[0-9.e+]+$/);
    }
  });
});

test("a raw request with a huge header is refused without harm", async () => {
  const server = await start();
  const status = await new Promise<number>((resolve, reject) => {
    const req = httpRequest(`${server.url}/api/jobs`, { headers: { ...server.auth, "x-junk": "z".repeat(64 * 1024) } }, (res) =>
      resolve(res.statusCode ?? 0),
    );
    req.on("error", reject);
    req.end();
  });
  expect(status).toBe(431);
  expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
});
