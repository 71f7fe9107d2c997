import type { BrowserSessionList } from "@corral/shared";
import { afterEach, describe, expect, test } from "vitest";
import { signIn, startServer, type TestServer } from "./helpers.js";
import { withRegistryOf } from "./registry-of.js";

let servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});
async function start(env: Record<string, string> = {}): Promise<TestServer> {
  const server = await startServer(env);
  servers.push(server);
  return server;
}

const getWith = (server: TestServer, url: string, headers: Record<string, string>) => fetch(`${server.url}${url}`, { headers, redirect: "manual" });
const sessionsOf = async (server: TestServer, cookie: string) =>
  ((await (await getWith(server, "/api/sessions", { cookie })).json()) as BrowserSessionList).sessions;

describe("browser sessions", () => {
  test("the page URL's token becomes a session cookie that holds no token, stored only as a hash", async () => {
    const server = await start();
    const res = await getWith(server, `/jobs?token=${server.token}&tab=2`, { "user-agent": "Test Browser 1.0" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/jobs?tab=2");
    const setCookie = res.headers.get("set-cookie") ?? "";
    expect(setCookie).toMatch(new RegExp(`^${server.services.sessions.cookieName}=`));
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).toMatch(/Max-Age=2592000/);
    expect(setCookie).not.toContain(server.token);
    const cookie = setCookie.split(";")[0] ?? "";
    const secret = cookie.split("=")[1] ?? "";
    expect((await getWith(server, "/api/jobs", { cookie })).status).toBe(200);

    const listed = await sessionsOf(server, cookie);
    expect(listed).toEqual([expect.objectContaining({ userAgent: "Test Browser 1.0", current: true })]);
    expect(JSON.stringify(listed)).not.toContain(secret);
    const dump = JSON.stringify(await withRegistryOf(server.dataDir, (registry) => registry.run("SELECT * FROM browser_sessions")));
    expect(dump).toContain("Test Browser 1.0");
    expect(dump).not.toContain(secret);
    expect(dump).not.toContain(server.token);
  });

  test("two servers' cookies have different names", async () => {
    const [a, b] = [await start(), await start()];
    expect(a.services.sessions.cookieName).not.toBe(b.services.sessions.cookieName);
  });

  test("one browser signed out; then everyone", async () => {
    const server = await start();
    const [first, second] = [await signIn(server), await signIn(server)];
    const others = (await sessionsOf(server, first)).filter((s) => !s.current);
    expect(others).toHaveLength(1);
    const signOut = await fetch(`${server.url}/api/sessions/${others[0]?.id}`, { method: "DELETE", headers: { cookie: first } });
    expect(signOut.status).toBe(204);
    const stale = await getWith(server, "/api/jobs", { cookie: second });
    expect(stale.status).toBe(401);
    expect(((await stale.json()) as { error: string }).error).toMatch(/expired or was signed out.*\?token=/);
    expect((await getWith(server, "/api/jobs", { cookie: first })).status).toBe(200);
    const unknown = await fetch(`${server.url}/api/sessions/nope`, { method: "DELETE", headers: { cookie: first } });
    expect(unknown.status).toBe(404);
    const bad = await fetch(`${server.url}/api/sessions/${"x".repeat(65)}`, { method: "DELETE", headers: { cookie: first } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { field: string }).field).toBe("id");

    const third = await signIn(server);
    const everywhere = await fetch(`${server.url}/api/sessions`, { method: "DELETE", headers: { cookie: first } });
    expect(await everywhere.json()).toEqual({ revoked: 2 });
    expect(everywhere.headers.get("set-cookie")).toMatch(/Max-Age=0/);
    for (const cookie of [first, third]) expect((await getWith(server, "/api/jobs", { cookie })).status).toBe(401);
    // The token itself still works: signing out ends browser sessions, not the token.
    expect((await getWith(server, "/api/jobs", server.auth)).status).toBe(200);
  });

  test("a cookie planted under the same name by another local page cannot shadow the real one", async () => {
    const server = await start();
    const real = await signIn(server);
    const name = server.services.sessions.cookieName;
    expect((await getWith(server, "/api/jobs", { cookie: `${name}=planted; ${real}` })).status).toBe(200);
    expect((await getWith(server, "/api/jobs", { cookie: `${name}=planted` })).status).toBe(401);
  });

  test("the old master-token cookie opens nothing and is cleared", async () => {
    const server = await start();
    const res = await getWith(server, "/api/jobs", { cookie: `corral_token=${server.token}` });
    expect(res.status).toBe(401);
    expect(res.headers.get("set-cookie")).toMatch(/^corral_token=; .*Max-Age=0/);
  });
});

describe("credentials never cross origins", () => {
  test("an allowed origin may send the token, never use the cookie", async () => {
    const server = await start({ CORRAL_ALLOWED_ORIGINS: "http://app.example" });
    const cookie = await signIn(server);
    const origin = "http://app.example";
    expect((await getWith(server, "/api/jobs", { cookie, origin })).status).toBe(401);
    expect((await getWith(server, "/api/jobs", { ...server.auth, origin })).status).toBe(200);
    const host = new URL(server.url).host;
    expect((await getWith(server, "/api/jobs", { cookie, origin: `http://${host}` })).status).toBe(200);
  });

  test("a cookie on a request the browser marks as from another site or port is ignored", async () => {
    const server = await start();
    const cookie = await signIn(server);
    for (const site of ["same-site", "cross-site"]) {
      expect((await getWith(server, "/api/jobs", { cookie, "sec-fetch-site": site })).status, site).toBe(401);
    }
    expect((await getWith(server, "/api/jobs", { cookie, "sec-fetch-site": "same-origin" })).status).toBe(200);
  });
});

describe("sign-in redirects stay on this server", () => {
  test("a path that a browser would read as another host redirects to /", async () => {
    const server = await start();
    const { request } = await import("node:http");
    const location = (target: string) =>
      new Promise<string>((resolve, reject) => {
        const req = request(`${server.url}/`, { path: target }, (res) => {
          res.resume();
          resolve(`${res.statusCode} ${res.headers.location ?? ""}`);
        });
        req.on("error", reject);
        req.end();
      });
    for (const target of ["//evil.example/", "/\\evil.example/", "//evil.example/x?a=1", "/%2F%2Fevil.example/"]) {
      const answer = await location(`${target}${target.includes("?") ? "&" : "?"}token=${server.token}`);
      expect(answer, target).toMatch(/^302 \/(\?a=1)?$|^302 \/%2F%2Fevil\.example\/$/);
    }
    expect(await location(`/jobs/abc?token=${server.token}`)).toBe("302 /jobs/abc");
  });
});

describe("the failure limiter is not a weapon", () => {
  test("wrong page tokens from any web page never lock out a client with the right token or a session", async () => {
    const server = await start({ CORRAL_AUTH_FAILURE_LIMIT: "3" });
    const cookie = await signIn(server);
    // What ten <img src="http://127.0.0.1:7433/?token=x"> on a hostile page send.
    for (let i = 0; i < 10; i++) await getWith(server, `/?token=x${i}`, {});
    expect((await getWith(server, "/?token=x", {})).status).toBe(429);
    expect((await getWith(server, "/api/jobs", server.auth)).status).toBe(200);
    expect((await getWith(server, "/api/jobs", { cookie })).status).toBe(200);
    expect((await getWith(server, `/?token=${server.token}`, {})).status).toBe(302);
    expect((await getWith(server, "/api/jobs", { authorization: "Bearer wrong-wrong-wrong-wrong" })).status).toBe(429);
  });
});
