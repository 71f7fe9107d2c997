// No Unix socket of the host from inside the bubblewrap sandbox (agents/seccomp.ts): a real
// net.Server listens on a socket in the workdir and on one in a read-only part of the sandbox
// (home), as a PostgreSQL or Docker socket would; a sandboxed worker tries them with node.
import { mkdirSync } from "node:fs";
import { createServer, type Server } from "node:net";
import path from "node:path";
import type { Job } from "@corral/shared";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startFakeOpenAI } from "./fixtures/fake-llm/openai.js";
import { api, startServer, type TestServer } from "./helpers.js";
import { hasTool } from "./required-tool.js";

const hasBwrap = hasTool(
  "bwrap",
  ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--", "true"],
  "apt-get install bubblewrap",
);

/** Answers "hello" to whoever connects, as a database's socket would answer its protocol. */
function listen(where: string | number): Promise<Server> {
  const server = createServer((socket) => {
    // The probe hangs up at once: a reset is its business.
    socket.on("error", () => {});
    socket.end("hello\n");
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    if (typeof where === "number") server.listen(where, "127.0.0.1", () => resolve(server));
    else server.listen(where, () => resolve(server));
  });
}

/** A node one-liner that connects to each target and prints `<name>: connected` or `<name>: <error code>`. */
function probeScript(targets: Record<string, string | number>): string {
  const js = `for (const [name, to] of Object.entries(${JSON.stringify(targets)})) {
    await new Promise((done) => {
      let s;
      try { s = typeof to === "number" ? require("net").connect(to, "127.0.0.1") : require("net").connect(to); }
      catch (e) { console.log(name + ": " + (e.code ?? e.message)); return done(); }
      s.on("connect", () => { console.log(name + ": connected"); s.destroy(); done(); });
      s.on("error", (e) => { console.log(name + ": " + e.code); done(); });
    });
  }`;
  return `(async () => { ${js} })()`;
}

let server: TestServer;
const listeners: Server[] = [];
let workdir: string;
let targets: Record<string, string | number>;
beforeAll(async () => {
  server = await startServer();
  workdir = path.join(server.root, "project");
  mkdirSync(workdir, { recursive: true });
  const inWorkdir = path.join(workdir, "db.sock");
  const inHome = path.join(server.root, ".s.PGSQL.5432");
  listeners.push(await listen(inWorkdir), await listen(inHome));
  const tcp = await listen(0);
  listeners.push(tcp);
  const address = tcp.address();
  targets = { workdirSocket: inWorkdir, homeSocket: inHome, tcp: typeof address === "object" && address ? address.port : 0 };
});
afterAll(async () => {
  for (const l of listeners) l.close();
  await server?.close();
});

/** The sockets are real and reachable from outside the sandbox: the test could fail. */
test("the host's sockets answer outside the sandbox", async () => {
  const res = await api(server, "POST", "/api/agents", {
    name: "outside",
    kind: "command",
    command: process.execPath,
    args: ["-e", "{prompt}"],
    workdir,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const output = await run("outside", probeScript(targets));
  expect(output).toContain("workdirSocket: connected");
  expect(output).toContain("homeSocket: connected");
  expect(output).toContain("tcp: connected");
});

async function run(agent: string, prompt: string): Promise<string> {
  const launched = await api<Job>(server, "POST", "/api/jobs", { agent, prompt });
  expect(launched.status, JSON.stringify(launched.body)).toBe(201);
  const [job] = await server.services.waits.waitFor([launched.body.id], 30_000);
  expect(job?.status, job?.error ?? "").toBe("succeeded");
  return server.services.output.outputTail(job!, 100_000);
}

describe.skipIf(!hasBwrap)("no Unix sockets from the sandbox", () => {
  test("a CLI worker under bwrap reaches no Unix socket of the host, and still has TCP (its provider's API)", async () => {
    const res = await api(server, "POST", "/api/agents", {
      name: "boxed",
      kind: "command",
      command: process.execPath,
      args: ["-e", "{prompt}"],
      workdir,
      sandbox: "bwrap",
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const output = await run("boxed", probeScript(targets));
    expect(output).toContain("workdirSocket: EAFNOSUPPORT");
    expect(output).toContain("homeSocket: EAFNOSUPPORT");
    expect(output).toContain("tcp: connected");
  });

  test("an API agent's bash reaches neither a Unix socket nor TCP; ordinary commands and pipes still work", async () => {
    const script = probeScript(targets);
    const fake = await startFakeOpenAI([
      {
        kind: "tool",
        name: "bash",
        args: { command: `'${process.execPath}' -e '${script.replaceAll("'", "'\\''")}'` },
        usage: { input: 10, output: 5 },
      },
      { kind: "tool", name: "bash", args: { command: "echo made > made.txt && seq 3 | wc -l && cat made.txt" }, usage: { input: 10, output: 5 } },
      { kind: "text", text: "done", usage: { input: 10, output: 1 } },
    ]);
    try {
      const created = await api(server, "POST", "/api/agents", {
        name: "scout",
        kind: "api",
        api: "openai",
        baseUrl: `${fake.url}/v1`,
        model: "m",
        tools: ["bash"],
        workdir,
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      await run("scout", "try the sockets");
      const last = fake.requests.filter((r) => r.path.endsWith("/chat/completions")).at(-1)?.body as {
        messages: { role: string; content: string }[];
      };
      const [sockets, ordinary] = last.messages.filter((m) => m.role === "tool").map((m) => m.content);
      expect(sockets).toContain("workdirSocket: EAFNOSUPPORT");
      expect(sockets).toContain("homeSocket: EAFNOSUPPORT");
      // Its own network namespace: the host's loopback is not there.
      expect(sockets).toMatch(/tcp: (ECONNREFUSED|ENETUNREACH)/);
      expect(sockets).toMatch(/\[exit status 0\]$/);
      expect(ordinary).toBe("3\nmade\n[exit status 0]");
    } finally {
      await fake.close();
    }
  });
});
