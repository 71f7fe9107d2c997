import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startServer, type TestServer } from "./helpers.js";
import { connectMcp } from "./mcp-client.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const get = (url: string, headers: Record<string, string> = {}) => fetch(`${server.url}${url}`, { headers, redirect: "manual" });

describe("the security floor", () => {
  test("health answers without a token", async () => {
    expect((await get("/api/health")).status).toBe(200);
  });

  test("no token, or a wrong one, is refused on REST and MCP", async () => {
    for (const url of ["/api/jobs", "/api/agents", "/mcp"]) {
      const none = await get(url);
      expect(none.status, url).toBe(401);
      expect(((await none.json()) as { error: string }).error).toMatch(/missing token/);
      const wrong = await get(url, { authorization: "Bearer wrong-token-wrong-token" });
      expect(wrong.status, url).toBe(401);
    }
    await expect(connectMcp(server, "/mcp", { authorization: "Bearer nope" })).rejects.toThrow();
  });

  test("a 401 challenges for a Bearer token, and says invalid_token only when one was sent", async () => {
    for (const url of ["/api/jobs", "/mcp", "/mcp/gemini"]) {
      expect((await get(url)).headers.get("www-authenticate"), url).toBe('Bearer realm="corral"');
      const wrong = await get(url, { authorization: "Bearer wrong-token-wrong-token" });
      expect(wrong.headers.get("www-authenticate"), url).toBe('Bearer realm="corral", error="invalid_token"');
      expect(((await wrong.json()) as { error: string }).error, url).toMatch(/wrong token/);
    }
  });

  test("an MCP client's OAuth discovery gets JSON saying to send the token, never the panel's page", async () => {
    for (const url of [
      "/.well-known/oauth-protected-resource",
      "/.well-known/oauth-protected-resource/mcp",
      "/.well-known/oauth-authorization-server",
      "/.well-known/openid-configuration",
      // The endpoints a client assumes when discovery finds none (Claude Code 2.1.332 POSTs /register).
      "/register",
      "/authorize",
      "/token",
    ]) {
      const res = await get(url);
      expect(res.status, url).toBe(404);
      expect(res.headers.get("content-type"), url).toMatch(/^application\/json/);
      expect(await res.json(), url).toMatchObject({ code: "not_found", error: expect.stringMatching(/does not use OAuth.*Authorization: Bearer/) });
    }
    const other = await get("/.well-known/security.txt");
    expect(other.status).toBe(404);
    expect(await other.json()).toMatchObject({ code: "not_found", error: "no route GET /.well-known/security.txt" });
    const registration = await fetch(`${server.url}/register`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(registration.status).toBe(404);
    expect(await registration.json()).toMatchObject({ error: expect.stringMatching(/does not use OAuth/) });
    // The panel's deep links are unchanged.
    expect((await get("/jobs/x", server.auth)).headers.get("content-type")).toMatch(/^text\/html/);
  });

  test("the Bearer scheme is case-insensitive, the token is not", async () => {
    expect((await get("/api/jobs", { authorization: `bearer ${server.token}` })).status).toBe(200);
    expect((await get("/api/jobs", { authorization: `BEARER   ${server.token}` })).status).toBe(200);
    expect((await get("/api/jobs", { authorization: `Bearer ${server.token.toUpperCase()}` })).status).toBe(401);
    expect((await get("/api/jobs", { authorization: `Basic ${server.token}` })).status).toBe(401);
  });

  test("no page can be framed, and content types are never guessed", async () => {
    for (const url of ["/", "/jobs/x", "/api/health", "/api/jobs"]) {
      const res = await get(url, server.auth);
      expect(res.headers.get("x-frame-options"), url).toBe("DENY");
      expect(res.headers.get("content-security-policy"), url).toContain("frame-ancestors 'none'");
      expect(res.headers.get("x-content-type-options"), url).toBe("nosniff");
    }
    // The built panel's policy (e2e/tour.spec.ts checks in Chromium that the panel needs nothing more): nothing inline, no eval.
    expect((await get("/", server.auth)).headers.get("content-security-policy")).toBe(
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    );
  });

  test("a malformed cookie is a plain 401, not a server error", async () => {
    const res = await get("/api/jobs", { cookie: `${server.services.sessions.cookieName}=%E0%A4%A` });
    expect(res.status).toBe(401);
  });

  test("a foreign Origin is refused, even with the token", async () => {
    const res = await fetch(`${server.url}/api/jobs`, {
      method: "POST",
      headers: { ...server.auth, origin: "https://evil.example", "content-type": "application/json" },
      body: JSON.stringify({ agent: "gemini", prompt: "x" }),
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: string }).error).toMatch(/Origin/);
    expect((await server.services.jobs.list({ limit: 10, offset: 0 })).total).toBe(0);
  });

  test("the same origin is accepted", async () => {
    const host = new URL(server.url).host;
    const res = await get("/api/jobs", { ...server.auth, origin: `http://${host}` });
    expect(res.status).toBe(200);
  });

  test("a foreign Host (DNS rebinding) is refused, every time, however many Host values came before", async () => {
    const { request } = await import("node:http");
    const statusWithHost = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request(`${server.url}/api/health`, { headers: { host } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on("error", reject);
        req.end();
      });
    const port = new URL(server.url).port;
    // Verdicts are kept per Host value: the second ask, and asks after the store has filled and
    // started over, must answer as the first.
    for (let round = 0; round < 2; round++) {
      expect(await statusWithHost("attacker.example:7433")).toBe(403);
      expect(await statusWithHost(`localhost:${port}`)).toBe(200);
    }
    for (let i = 0; i < 300; i++) expect(await statusWithHost(`rebind-${i}.example`)).toBe(403);
    expect(await statusWithHost("attacker.example:7433")).toBe(403);
    expect(await statusWithHost(`127.0.0.1:${port}`)).toBe(200);
  });

  test("the token in the URL becomes an HttpOnly, SameSite=Strict cookie that opens the API", async () => {
    const res = await get(`/jobs?token=${server.token}&tab=2`);
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/jobs?tab=2");
    const cookie = res.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    const withCookie = await get("/api/jobs", { cookie: cookie.split(";")[0] ?? "" });
    expect(withCookie.status).toBe(200);
    expect((await get("/jobs?token=wrong")).status).not.toBe(302);
  });
});

test("without CORRAL_TOKEN a token is generated once and kept with mode 0600", async () => {
  const first = await startServer({ CORRAL_TOKEN: "" });
  const file = path.join(first.dataDir, "token");
  const token = readFileSync(file, "utf8").trim();
  expect(first.token).toBe(token);
  expect(token.length).toBeGreaterThanOrEqual(24);
  expect(statSync(file).mode & 0o777).toBe(0o600);
  await first.app.close();
  const second = await startServer({ CORRAL_TOKEN: "" }, { dataDir: first.dataDir, root: first.root });
  expect(second.token).toBe(token);
  await second.close();
});
