import { existsSync, readFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Job } from "@corral/shared";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { api, startServer, type TestServer } from "./helpers.js";

/**
 * Every registered route, requested without credentials under every spelling a router or proxy
 * might read as the same path. Whatever the spelling matches — the protected route, the panel's
 * page, or nothing — no answer may be a success carrying data. New routes are covered by being
 * registered; a new public one must be added to PUBLIC below, on purpose.
 */

const indexFile = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../web/dist/index.html");
/** The only routes that answer without credentials: readiness. (Panel files are checked apart.) */
const PUBLIC = ["GET /api/health", "HEAD /api/health"];

let server: TestServer;
let jobId: string;
let port: number;
beforeAll(async () => {
  server = await startServer();
  port = Number(new URL(server.url).port);
  const workdir = path.join(server.root, "work");
  const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "gemini", prompt: "hi", workdir });
  expect(launched.status).toBe(201);
  jobId = launched.body.id;
});
afterAll(() => server.close());

interface RawAnswer {
  status: number;
  headers: string;
  body: string;
}

/** One request exactly as written (no client-side normalising of the target), over a fresh socket. */
function raw(method: string, target: string, extraHeaders: string[] = [], body = ""): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    const head = [`${method} ${target} HTTP/1.1`, `Host: 127.0.0.1:${port}`, "Connection: close", ...extraHeaders];
    if (body) head.push("Content-Type: application/json", `Content-Length: ${Buffer.byteLength(body)}`);
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no answer to ${method} ${target}`)));
    socket.on("connect", () => socket.write(`${head.join("\r\n")}\r\n\r\n${body}`));
    socket.on("data", (chunk) => {
      chunks.push(chunk);
      // An accepted upgrade keeps the socket open: its status line is all we need.
      if (Buffer.concat(chunks).toString("latin1").startsWith("HTTP/1.1 101")) socket.destroy();
    });
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const split = text.indexOf("\r\n\r\n");
      const headers = split < 0 ? text : text.slice(0, split);
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), headers, body: split < 0 ? "" : text.slice(split + 4) });
    });
    socket.on("error", reject);
  });
}

/** The same path as a router, a proxy or a browser might also read it. */
function spellings(pathname: string): string[] {
  const segments = pathname.split("/").slice(1);
  const encodeFirst = (s: string) => (s ? `%${s.charCodeAt(0).toString(16)}${s.slice(1)}` : s);
  const encodeAll = (s: string, upper: boolean) =>
    s.replace(/[a-z]/gi, (c) => {
      const hex = c.charCodeAt(0).toString(16);
      return `%${upper ? hex.toUpperCase() : hex}`;
    });
  const [first = "", ...rest] = segments;
  return [
    pathname,
    `/${segments.map(encodeFirst).join("/")}`,
    `/${segments.map((s) => encodeAll(s, true)).join("/")}`,
    `/${segments.map((s) => encodeAll(s, false)).join("%2F")}`,
    `/${segments.join("%2f")}`,
    `http://127.0.0.1:${port}${pathname}`,
    `http://localhost${pathname}`,
    `/${pathname}`,
    pathname.replace(/\//g, "//"),
    `/${first}/./${rest.join("/")}`,
    `/x/..${pathname}`,
    `/%2e%2e${pathname}`,
    `/${first}/%2e/${rest.join("/")}`,
    pathname.replace(/\//g, "\\"),
    pathname.toUpperCase(),
    `/${first.charAt(0).toUpperCase()}${first.slice(1)}/${rest.join("/")}`,
    `${pathname};`,
    `${pathname};x=1`,
    `${pathname}?`,
    `${pathname}?x=1`,
    `${pathname}/`,
    `${pathname}%00`,
    `${pathname}%20`,
    `${pathname}#x`,
  ].map((s) => s.replace(/\/\/$/, "/"));
}

function concrete(url: string): string {
  return url
    .replace(/:id\b/g, jobId)
    .replace(/:name\b/g, "gemini")
    .replace(/:agent\b/g, "gemini")
    .replace(/:[a-z]+/gi, "x")
    .replace(/\*/g, "x");
}

/** A success that is only the panel's shell (what unknown paths serve) holds no data. */
function leaks(answer: RawAnswer, indexHtml: string): string | null {
  if (answer.status === 101) return "upgraded";
  if (answer.body.includes(server.token)) return "the token in the body";
  if (answer.status < 200 || answer.status >= 300) return null;
  if (/content-type: text\/html/i.test(answer.headers) && answer.body.includes(indexHtml.slice(0, 200))) return null;
  if (answer.body === "" && /content-type: text\/html/i.test(answer.headers)) return null; // HEAD of the page
  return `answered ${answer.status} with ${answer.body.slice(0, 120) || "headers only"}`;
}

describe("no spelling of a protected route answers without credentials", () => {
  test("public routes are exactly the declared ones, and panel pages are only panel files", () => {
    const routes = server.routes();
    expect(routes.length).toBeGreaterThan(40);
    expect(
      routes
        .filter((r) => r.access === "public")
        .map((r) => `${r.method} ${r.url}`)
        .sort(),
    ).toEqual([...PUBLIC].sort());
    for (const page of routes.filter((r) => r.access === "page")) {
      expect(["GET", "HEAD"], `${page.method} ${page.url}`).toContain(page.method);
      expect(page.url, "a panel file").not.toMatch(/^\/(api|mcp|metrics)(\/|$)/);
    }
  });

  test("every route, every method it has, every spelling, and a WebSocket upgrade of each", async () => {
    expect(existsSync(indexFile), "the panel is built (pnpm build)").toBe(true);
    const indexHtml = readFileSync(indexFile, "utf8");
    const protectedRoutes = server.routes().filter((r) => r.access === "credentials");
    const failures: string[] = [];
    let tried = 0;
    const upgrade = ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="];
    for (const route of protectedRoutes) {
      const body = ["POST", "PUT", "PATCH"].includes(route.method) ? JSON.stringify({ agent: "command", name: "x", prompt: "id" }) : "";
      for (const target of spellings(concrete(route.url))) {
        const answers = await Promise.all([raw(route.method, target, [], body), route.method === "GET" ? raw("GET", target, upgrade) : null]);
        for (const answer of answers) {
          if (!answer) continue;
          tried++;
          const leak = leaks(answer, indexHtml);
          if (leak) failures.push(`${route.method} ${target}: ${leak}`);
        }
      }
    }
    expect(failures).toEqual([]);
    expect(tried).toBeGreaterThan(1000);
    // Nothing was created through any of them, and the server still serves.
    expect((await api<{ total: number }>(server, "GET", "/api/jobs")).body.total).toBe(1);
    expect((await server.services.agents.list()).some((a) => a.name === "x")).toBe(false);
    expect((await raw("GET", "/api/health")).status).toBe(200);
  });

  test("those spellings do reach the protected route, so the test above is not vacuous", async () => {
    const auth = [`Authorization: Bearer ${server.token}`];
    for (const target of ["/%61pi/connect", "/%61%70%69/%63onnect", `http://127.0.0.1:${port}/api/connect`, "/api/connect?"]) {
      const answer = await raw("GET", target, auth);
      expect(answer.status, target).toBe(200);
      expect(answer.body, target).toContain(server.token);
    }
  });
});
