import { copyFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { readableText, type AgentWithAvailability, type Job, type OutputPage, type ReadablePage } from "@corral/shared";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { bwrapArgs } from "../src/agents/bubblewrap.js";
import { stateDirsOf } from "../src/agents/sandbox.js";
import { api, startServer, until, type TestServer } from "./helpers.js";
import { connectMcp, textOf } from "./mcp-client.js";
import { hasBwrap } from "./required-tool.js";

const parrotCli = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures", "parrot", "parrot.mjs");

// The one line a kind adds: the list of kinds (agents/kinds/index.ts), with the test's fake kind added.
vi.mock("../src/agents/kinds/index.js", async (importOriginal) => {
  const { agentKindModules } = await importOriginal<typeof import("../src/agents/kinds/index.js")>();
  const { parrot } = await import("./fixtures/parrot/kind.js");
  return { agentKindModules: [...agentKindModules, parrot] };
});

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const workdir = (name: string) => {
  const dir = path.join(server.root, name);
  mkdirSync(dir, { recursive: true });
  return dir;
};

async function runJob(body: Record<string, unknown>): Promise<Job> {
  const launched = await api<Job>(server, "POST", "/api/jobs", body);
  expect(launched.status).toBe(201);
  const [job] = await server.services.waits.waitFor([launched.body.id], 30_000);
  return job!;
}

describe("an agent kind added with one module and one line in the list of kinds", () => {
  test("REST lists its built-in agent with its provider, install check, version and Readable view, and takes new agents of the kind", async () => {
    const { body } = await api<{ agents: AgentWithAvailability[] }>(server, "GET", "/api/agents");
    const parrot = body.agents.find((a) => a.name === "parrot");
    expect(parrot).toMatchObject({ kind: "parrot", provider: "parrot-cloud", builtin: true, readable: true, answerIsOutput: false, retry: null });
    expect(parrot?.availability).toMatchObject({ available: true, version: "parrot 1.2.3" });
    // Kiro prints plain text: its answer is its output, which the panel shows once.
    expect(body.agents.find((a) => a.name === "kiro")).toMatchObject({ readable: false, answerIsOutput: true });
    const created = await api(server, "POST", "/api/agents", { name: "parrot_two", kind: "parrot", workdir: workdir("two") });
    expect(created.status).toBe(201);
  });

  test("MCP lists its tools and runs it", async () => {
    const client = await connectMcp(server);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(["parrot_run", "parrot_run_async", "parrot_done"]));
      const result = await client.callTool({ name: "parrot_run", arguments: { prompt: "polly", workdir: workdir("mcp") } });
      expect(textOf(result)).toMatch(/^ok\b[\s\S]*polly/);
    } finally {
      await client.close();
    }
  });

  test("its output reads as its events in the Readable view, and as printed in the raw one", async () => {
    const job = await runJob({ agent: "parrot", prompt: "hello there", workdir: workdir("readable") });
    expect(job.status).toBe("succeeded");
    const page = await api<ReadablePage>(server, "GET", `/api/jobs/${job.id}/readable`);
    expect(page.body.complete).toBe(true);
    expect(page.body.events.map(readableText)).toEqual([
      "· session started · parrot-1",
      "→ write said.txt",
      "← ok",
      "hello there",
      "✓ done · 3 in / 5 out",
    ]);
    const raw = await api<OutputPage>(server, "GET", `/api/jobs/${job.id}/output`);
    expect(raw.body.chunks.map((c) => c.text).join("")).toContain('{"type":"say","text":"hello there"}');
  });

  test("a running job's readable output has each whole line as soon as it is printed, the open one once it ends", async () => {
    const created = await api(server, "POST", "/api/agents", {
      name: "printer",
      kind: "command",
      command: "/bin/sh",
      args: ["-c", "{prompt}"],
      workdir: workdir("printer"),
    });
    expect(created.status).toBe(201);
    // One write holding a whole line and the start of the next.
    const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "printer", prompt: "printf 'one\\ntw'; sleep 30" });
    const id = launched.body.id;
    const page = await until(async () => {
      const read = await api<ReadablePage>(server, "GET", `/api/jobs/${id}/readable`);
      return read.body.events.length ? read.body : undefined;
    });
    expect(page.events).toEqual([{ type: "output", stream: "out", text: "one" }]);
    expect(page.complete).toBe(false);
    await api(server, "POST", `/api/jobs/${id}/cancel`);
    const rest = await api<ReadablePage>(server, "GET", `/api/jobs/${id}/readable?cursor=${page.cursor}`);
    expect(rest.body.events[0]).toEqual({ type: "output", stream: "out", text: "tw" });
    expect(rest.body.complete).toBe(true);
  });

  test("the sandbox lets it write its own state dirs", async () => {
    const home = server.root;
    mkdirSync(path.join(home, ".parrot"), { recursive: true });
    const args = bwrapArgs(workdir("boxed"), home, server.dataDir, stateDirsOf({ kind: "parrot", command: null }));
    expect(args.join(" ")).toContain(`--bind ${path.join(home, ".parrot")} ${path.join(home, ".parrot")}`);
  });

  test.skipIf(!hasBwrap())("a sandboxed job of the kind runs with its state dirs writable", async () => {
    mkdirSync(path.join(server.root, ".parrot"), { recursive: true });
    // The sandbox gives the worker a private /tmp, where a checkout of this repo may live: its CLI
    // goes in the home dir, which stays readable in the sandbox.
    const bin = path.join(server.root, "bin", "parrot.mjs");
    mkdirSync(path.dirname(bin), { recursive: true });
    copyFileSync(parrotCli, bin);
    const created = await api(server, "POST", "/api/agents", {
      name: "parrot_boxed",
      kind: "parrot",
      command: bin,
      sandbox: "bwrap",
      workdir: workdir("sandboxed"),
    });
    expect(created.status).toBe(201);
    const job = await runJob({ agent: "parrot_boxed", prompt: "boxed" });
    expect(job.status).toBe("succeeded");
    const state = path.join(server.root, ".parrot");
    expect(job.invocation?.args.join(" ")).toContain(`--bind ${state} ${state}`);
  });
});
