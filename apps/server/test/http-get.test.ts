import { createServer } from "node:http";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import type { Job } from "@corral/shared";
import { httpGet, type Resolve } from "../src/agents/api/http-get.js";
import { startFakeOpenAI } from "./fixtures/fake-llm/openai.js";
import type { Script } from "./fixtures/fake-llm/script.js";
import { type Listening, listenOn, machineAddress } from "./fixtures/loopback.js";
import { api, startServer, until } from "./helpers.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A real HTTP server on `host` that counts who reached it; `answer` decides its reply. */
async function site(host: string, answer: (url: string) => [number, Record<string, string>, string], port = 0) {
  const hits: string[] = [];
  const listening: Listening = await listenOn(
    createServer((req, res) => {
      hits.push(req.url ?? "");
      const [status, headers, body] = answer(req.url ?? "");
      res.writeHead(status, headers).end(body);
    }),
    host,
    port,
  );
  cleanups.push(() => listening.close());
  return { ...listening, hits };
}
const never = (): [number, Record<string, string>, string] => [200, { "content-type": "text/plain" }, "the server's own machine answered"];

const external = machineAddress();
const workdir = (root: string) => {
  const dir = path.join(root, "work");
  mkdirSync(dir, { recursive: true });
  return dir;
};

describe("http_get reaches no address of this machine, by any name or spelling", () => {
  test("names and literal forms of loopback and the unspecified address are refused; the loopback server is never reached", async () => {
    const loopback = await site("127.0.0.1", never);
    const P = loopback.port;
    const urls = [
      `http://localhost:${P}/`, // a name: /etc/hosts answers 127.0.0.1
      `http://127.1:${P}/`,
      `http://2130706433:${P}/`,
      `http://0x7f000001:${P}/`,
      `http://0x7f.0.0.1:${P}/`,
      `http://0177.0.0.1:${P}/`,
      `http://[::ffff:127.0.0.1]:${P}/`,
      `http://0.0.0.0:${P}/`, // Linux connects it to this machine
      `http://0:${P}/`,
      `http://[::1]:${P}/`,
      `http://[::]:${P}/`,
      `http://169.254.169.254/latest/meta-data/`,
    ];
    const allowed = ["localhost", "127.0.0.1", "0.0.0.0", "::ffff:127.0.0.1", "::1", "::", "169.254.169.254"];
    const answers = await Promise.all(urls.map((url) => httpGet(url, allowed, AbortSignal.timeout(10_000)).catch((err: Error) => err.message)));
    expect(answers).toEqual([
      "localhost resolves to 127.0.0.1, loopback (this machine); http_get reaches no such address, whatever the allowlist says",
      ...Array(5).fill("127.0.0.1 resolves to 127.0.0.1, loopback (this machine); http_get reaches no such address, whatever the allowlist says"),
      "::ffff:7f00:1 resolves to ::ffff:7f00:1, loopback (this machine); http_get reaches no such address, whatever the allowlist says",
      ...Array(2).fill(
        "0.0.0.0 resolves to 0.0.0.0, the unspecified address (this machine); http_get reaches no such address, whatever the allowlist says",
      ),
      "::1 resolves to ::1, loopback (this machine); http_get reaches no such address, whatever the allowlist says",
      ":: resolves to ::, the unspecified address (this machine); http_get reaches no such address, whatever the allowlist says",
      "169.254.169.254 resolves to 169.254.169.254, link-local (cloud metadata lives there); http_get reaches no such address, whatever the allowlist says",
    ]);
    expect(loopback.hits).toEqual([]);
  });

  test.skipIf(!external)("a redirect from an allowed site to loopback is refused, and a second DNS answer cannot rebind", async () => {
    const host = external ?? "";
    // The allowed site and the loopback server share a port, so a connection that went by name to the wrong answer would land.
    const outside = await site(host, (url) =>
      url === "/to-loopback"
        ? [302, { location: `http://localhost:${port}/` }, ""]
        : url === "/again"
          ? [302, { location: "/next" }, ""]
          : [200, {}, `outside ${url}`],
    );
    const port = outside.port;
    const loopback = await site("127.0.0.1", never, port);

    expect(
      await httpGet(`http://${host}:${port}/to-loopback`, [host, "localhost"], AbortSignal.timeout(10_000)).catch((err: Error) => err.message),
    ).toBe("localhost resolves to 127.0.0.1, loopback (this machine); http_get reaches no such address, whatever the allowlist says");

    // rebind.test answers the outside address once, then loopback: the first connection must go where it was checked,
    // and the redirect's own resolution is checked again.
    const asked: string[] = [];
    const rebinding: Resolve = async (name) => {
      asked.push(name);
      return [{ address: asked.length === 1 ? host : "127.0.0.1", family: 4 }];
    };
    expect(await httpGet(`http://rebind.test:${port}/first`, ["rebind.test"], AbortSignal.timeout(10_000), rebinding)).toBe(
      `HTTP 200 (unknown type) from http://rebind.test:${port}/first\n\noutside /first`,
    );
    expect(
      await httpGet(`http://rebind.test:${port}/again`, ["rebind.test"], AbortSignal.timeout(10_000), rebinding).catch((err: Error) => err.message),
    ).toBe("rebind.test resolves to 127.0.0.1, loopback (this machine); http_get reaches no such address, whatever the allowlist says");
    expect(outside.hits).toEqual(["/to-loopback", "/first"]);
    expect(loopback.hits).toEqual([]);
  });

  test("an API agent's http_get to a name on its allowlist that resolves to loopback answers a refusal; the server is never reached", async () => {
    const loopback = await site("127.0.0.1", never);
    const server = await startServer({ SCOUT_KEY: "sk-test" });
    cleanups.push(() => server.close());
    const script: Script = [
      { kind: "tool", name: "http_get", args: { url: `http://localhost:${loopback.port}/token` }, usage: { input: 1, output: 1 } },
      { kind: "text", text: "done", usage: { input: 1, output: 1 } },
    ];
    const fake = await startFakeOpenAI(script);
    cleanups.push(() => fake.close());
    const agent = { name: "scout", kind: "api", apiKeyEnv: "SCOUT_KEY", api: "openai", baseUrl: `${fake.url}/v1`, model: "m" };
    expect((await api(server, "POST", "/api/agents", { ...agent, tools: ["http_get"], allowedHosts: ["localhost"] })).status).toBe(201);
    const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "scout", prompt: "fetch", workdir: workdir(server.root) });
    expect(launched.status, JSON.stringify(launched.body)).toBe(201);
    const row = await until(async () => {
      const job = (await api<Job>(server, "GET", `/api/jobs/${launched.body.id}`)).body;
      return ["queued", "running"].includes(job.status) ? undefined : job;
    });
    expect(row.status, row.error ?? "").toBe("succeeded");
    const last = fake.requests.filter((r) => r.path.endsWith("/chat/completions")).at(-1)?.body as { messages: { role: string; content: string }[] };
    expect(last.messages.filter((m) => m.role === "tool").map((m) => m.content)).toEqual([
      "error: refused: localhost resolves to 127.0.0.1, loopback (this machine); http_get reaches no such address, whatever the allowlist says",
    ]);
    expect(loopback.hits).toEqual([]);
  });
});
