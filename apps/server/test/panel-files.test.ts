import { existsSync, readdirSync, readFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startServer, type TestServer } from "./helpers.js";

/**
 * The built panel over real HTTP: hashed assets compressed by Accept-Encoding and cached for good,
 * the page itself revalidated, and no other spelling of an asset path picking up the long cache.
 */

const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../web/dist");
const IMMUTABLE = "public, max-age=31536000, immutable";

let server: TestServer;
let script: string;
beforeAll(async () => {
  expect(existsSync(path.join(dist, "index.html")), "the panel is built (pnpm build)").toBe(true);
  server = await startServer();
  const main = /src="\/assets\/([^"]+\.js)"/.exec(readFileSync(path.join(dist, "index.html"), "utf8"))?.[1];
  if (!main) throw new Error("index.html names no script");
  script = main;
});
afterAll(() => server.close());

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A request sent as written (no client-side decoding of the body or normalising of the path). */
function get(target: string, headers: Record<string, string> = {}): Promise<Answer> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = http.get({ host: "127.0.0.1", port, path: target, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
  });
}

describe("hashed assets", () => {
  test("the build wrote a brotli and a gzip copy of every script and stylesheet", () => {
    const assets = readdirSync(path.join(dist, "assets"));
    const text = assets.filter((n) => /\.(js|css)$/.test(n));
    expect(text.length).toBeGreaterThan(1);
    for (const name of text) expect(assets, name).toEqual(expect.arrayContaining([`${name}.br`, `${name}.gz`]));
  });

  test("are sent compressed as the browser accepts, the same bytes once decoded", async () => {
    const original = readFileSync(path.join(dist, "assets", script));
    const br = await get(`/assets/${script}`, { "accept-encoding": "gzip, deflate, br" });
    expect(br.status).toBe(200);
    expect(br.headers["content-encoding"]).toBe("br");
    expect(br.headers["content-type"]).toMatch(/javascript/);
    expect(br.headers.vary).toMatch(/accept-encoding/i);
    expect(br.body.length).toBeLessThan(original.length / 3);
    expect(brotliDecompressSync(br.body).equals(original)).toBe(true);

    const gz = await get(`/assets/${script}`, { "accept-encoding": "gzip" });
    expect(gz.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(gz.body).equals(original)).toBe(true);

    const plain = await get(`/assets/${script}`);
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.body.equals(original)).toBe(true);
  });

  test("are cached for a year without revalidation, whatever the encoding", async () => {
    for (const encoding of ["br", "gzip", "identity"]) {
      const res = await get(`/assets/${script}`, { "accept-encoding": encoding });
      expect(res.headers["cache-control"], encoding).toBe(IMMUTABLE);
    }
  });

  test("the compressed copies are not files of their own", async () => {
    const res = await get(`/assets/${script}.br`);
    expect(res.headers["content-encoding"]).toBeUndefined();
    expect(res.headers["cache-control"]).not.toBe(IMMUTABLE);
    expect(res.status).toBe(404);
  });

  test("no other spelling of an asset's path is cached for good", async () => {
    const spellings = [
      `/ASSETS/${script}`,
      `/assets//${script}`,
      `/assets/./${script}`,
      `/x/../assets/${script}`,
      `/%61ssets/${script}`,
      `/assets%2f${script}`,
      `/assets/${script}/`,
      `/assets/${script}%00`,
      `/assets/..%2f/assets/${script}`,
      `/api/../assets/${script}`,
    ];
    for (const target of spellings) {
      const res = await get(target, { "accept-encoding": "br" });
      // Either the very file under a spelling the router folds to it, or not an asset at all.
      if (res.headers["cache-control"] === IMMUTABLE) expect(res.headers["content-type"], target).toMatch(/javascript/);
      else expect(res.headers["content-encoding"], target).toBeUndefined();
    }
  });
});

describe("the page", () => {
  test("the icon is served to a browser not signed in; a file the build has not is a 404, not the page", async () => {
    const icon = await get("/favicon.svg");
    expect(icon.status).toBe(200);
    expect(icon.headers["content-type"]).toContain("image/svg+xml");
    expect(readFileSync(path.join(dist, "index.html"), "utf8")).toContain('<link rel="icon" href="/favicon.svg"');
    for (const missing of ["/favicon.ico", "/robots.txt", "/jobs/nothing.js"]) {
      const answer = await get(missing);
      expect(answer.status, missing).toBe(404);
      expect(answer.headers["content-type"], missing).toContain("application/json");
    }
    // Deep links are still the page.
    expect((await get("/jobs/abcdef123456")).status).toBe(200);
  });

  test("index.html and deep links revalidate on each use, and an unchanged page answers 304", async () => {
    for (const target of ["/", "/index.html", "/jobs", "/costs?from=2026-01-01"]) {
      const res = await get(target, { "accept-encoding": "br, gzip" });
      expect(res.status, target).toBe(200);
      expect(res.headers["content-type"], target).toMatch(/text\/html/);
      expect(res.headers["cache-control"], target).toBe("no-cache");
      expect(res.headers.etag, target).toBeTruthy();
      expect(res.headers["last-modified"], target).toBeTruthy();
      const again = await get(target, { "if-none-match": String(res.headers.etag) });
      expect(again.status, target).toBe(304);
    }
  });
});
