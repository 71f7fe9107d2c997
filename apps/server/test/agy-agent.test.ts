// The agy kind (Antigravity CLI) through the real server, with the fake agy in fixtures/bin speaking
// its documented stream (fixtures/fake-cli.mjs); CORRAL_GEMINI_AGENT pointing pyCorral's gemini_*
// tools at it; and the gemini kind on an individual Google account, which Gemini CLI refuses
// since 2026-06-18.
import { mkdirSync, readFileSync } from "node:fs";
import { Writable } from "node:stream";
import path from "node:path";
import type { AgentWithAvailability, Job, ReadablePage } from "@corral/shared";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { INELIGIBLE_ACCOUNT } from "../src/agents/kinds/gemini.js";
import { ConfigError, loadConfig } from "../src/config.js";
import { api, killGroupOf, printed, startServer, type TestServer, workerPid } from "./helpers.js";
import { connectMcp, TEST_MCP_ERA, textOf } from "./mcp-client.js";
import { CreateTaskResultSchema } from "./tasks-2025.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

let workdirs = 0;
const workdir = (s: TestServer) => {
  const dir = path.join(s.root, `agy-work-${++workdirs}`);
  mkdirSync(dir, { recursive: true });
  return dir;
};

async function runJob(s: TestServer, body: Record<string, unknown>): Promise<Job> {
  const launched = await api<Job>(s, "POST", "/api/jobs", body);
  expect(launched.status, JSON.stringify(launched.body)).toBe(201);
  const [job] = await s.services.waits.waitFor([launched.body.id], 30_000);
  return job!;
}

describe("the agy agent", () => {
  test("is built in: Antigravity CLI found on PATH with its version, read as events, able to follow up", async () => {
    const { body } = await api<{ agents: AgentWithAvailability[] }>(server, "GET", "/api/agents");
    const agy = body.agents.find((a) => a.name === "agy");
    expect(agy).toMatchObject({ kind: "agy", provider: "google", builtin: true, readable: true, resumes: true });
    expect(agy?.availability).toMatchObject({ available: true, version: "agy 9.9.9-fake" });
  });

  test("missing, it says how to install it and sign in", async () => {
    const empty = path.join(server.root, "no-agy-here");
    mkdirSync(empty, { recursive: true });
    expect((await api(server, "POST", "/api/agents", { name: "agy_missing", kind: "agy", env: { PATH: empty } })).status).toBe(201);
    const { body } = await api<{ agents: AgentWithAvailability[] }>(server, "GET", "/api/agents");
    expect(body.agents.find((a) => a.name === "agy_missing")?.availability).toEqual({
      available: false,
      resolved: null,
      hint:
        "agy was not found on PATH; install it with curl -fsSL https://antigravity.google/cli/install.sh | bash and sign in by running " +
        "agy once (it lands in ~/.local/bin: put that on the server's PATH), or set CORRAL_AGY_MISSING_BIN to its path",
      version: null,
    });
  });

  test("a job: its answer, the file it wrote, its tokens, the command it ran, its Readable view", async () => {
    const dir = workdir(server);
    const job = await runJob(server, { agent: "agy", prompt: "write hello.txt hi there\nDone: wrote hello.txt", workdir: dir });
    expect(job.status, job.error ?? "").toBe("succeeded");
    expect(job.finalText).toBe("wrote hello.txt\nDone: wrote hello.txt\ndone agy");
    expect(readFileSync(path.join(dir, "hello.txt"), "utf8")).toBe("hi there");
    // The fake's two model calls: 1200 + 1300 in (100 cached), 40 + 12 out (thinking included).
    expect(job.usage).toMatchObject({ model: "gemini-3.5-flash", inputTokens: 2500, outputTokens: 52, cachedInputTokens: 100 });
    expect(job.workerSession).toMatch(/^[0-9a-f-]{36}$/);
    expect(job.invocation?.args).toEqual([
      "--output-format=stream-json",
      "--dangerously-skip-permissions",
      "--print-timeout=169h",
      `--add-dir=${dir}`,
      `--print=${job.prompt}`,
    ]);
    const page = await api<ReadablePage>(server, "GET", `/api/jobs/${job.id}/readable`);
    const kinds = page.body.events.map((e) => e.type);
    expect(kinds).toEqual(expect.arrayContaining(["session", "prompt", "tool_call", "tool_result", "text", "usage"]));
    expect(page.body.events).toContainEqual({ type: "tool_call", name: "write_to_file", args: path.join(dir, "hello.txt") });
  });

  test("a follow-up resumes the conversation in its workdir", async () => {
    const first = await runJob(server, { agent: "agy", prompt: "remember the word heron", workdir: workdir(server) });
    const second = await runJob(server, { agent: "agy", prompt: "recall", session: first.id });
    expect(second.status, second.error ?? "").toBe("succeeded");
    expect(second.followUpOf).toBe(first.id);
    expect(second.workerSession).toBe(first.workerSession);
    expect(second.invocation?.args).toContain(`--conversation=${first.workerSession}`);
    expect(second.finalText).toBe("turn 1: remember the word heron\ndone agy");
  });

  test("a turn agy reports as failed fails the job, though agy exited 0, with agy's reason", async () => {
    // Not a transient error (those are tried again, agents/retry-defaults.ts).
    const job = await runJob(server, { agent: "agy", prompt: "thinking\nfail INVALID_ARGUMENT: unknown model", workdir: workdir(server) });
    expect(job.exitCode).toBe(0);
    expect(job.status).toBe("failed");
    expect(job.error).toBe("INVALID_ARGUMENT: unknown model");
  });

  test("an agy that dies before its result fails, saying its turn did not end; its output keeps what it said", async () => {
    const job = await runJob(server, { agent: "agy", prompt: "stderr lost the connection\nexit 3", workdir: workdir(server) });
    expect(job).toMatchObject({ status: "failed", exitCode: 3 });
    expect(job.error).toMatch(/^Antigravity CLI ended without the result of its turn/);
    const client = await connectMcp(server);
    try {
      const done = textOf(await client.callTool({ name: "agy_done", arguments: { job_id: job.id } }));
      expect(done).toMatch(/^error: Antigravity CLI ended without the result of its turn[\s\S]*exit 3[\s\S]*lost the connection/);
    } finally {
      await client.close();
    }
  });

  test("a worker killed by a signal says so, not what its output lacks", async () => {
    const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "agy", prompt: "hang", workdir: workdir(server) });
    // Its init is out: the job's output has begun, and no result will follow.
    await printed(server, launched.body.id, '"event":"init"');
    killGroupOf(await workerPid(server, launched.body.id));
    const [job] = await server.services.waits.waitFor([launched.body.id], 30_000);
    expect(job).toMatchObject({ status: "failed", exitCode: null });
    expect(job?.error).toMatch(/^the worker was killed by a signal/);
  });

  test("over MCP: agy_run answers ok with the answer; agy_done says error: for a failed turn", async () => {
    const client = await connectMcp(server);
    try {
      const ok = textOf(await client.callTool({ name: "agy_run", arguments: { prompt: "hello from agy", workdir: workdir(server) } }));
      expect(ok).toMatch(/^ok\n[\s\S]*hello from agy/);
      const id = textOf(await client.callTool({ name: "agy_run_async", arguments: { prompt: "fail denied", workdir: workdir(server) } }));
      await server.services.waits.waitFor([id], 30_000);
      expect(textOf(await client.callTool({ name: "agy_done", arguments: { job_id: id } }))).toMatch(/^error: denied/);
    } finally {
      await client.close();
    }
  });
});

describe("the gemini agent on an individual Google account", () => {
  test("its jobs fail saying Gemini CLI no longer serves the account, and pointing to an API key or agy", async () => {
    const job = await runJob(server, { agent: "gemini", prompt: "ineligible", workdir: workdir(server) });
    expect(job.status).toBe("failed");
    expect(job).toMatchObject({ exitCode: 1, error: INELIGIBLE_ACCOUNT });
    const client = await connectMcp(server, "/mcp/gemini");
    try {
      const id = textOf(await client.callTool({ name: "gemini_run_async", arguments: { prompt: "ineligible", workdir: workdir(server) } }));
      await server.services.waits.waitFor([id], 30_000);
      const done = textOf(await client.callTool({ name: "gemini_done", arguments: { job_id: id } }));
      expect(done).toMatch(/^error: Gemini CLI no longer serves individual Google accounts .*since 2026-06-18.*GEMINI_API_KEY/);
      expect(done).toContain("CORRAL_GEMINI_AGENT=agy");
    } finally {
      await client.close();
    }
  });

  test("a gemini agent whose CLI is missing says what to install, and that individual accounts use agy", async () => {
    const empty = path.join(server.root, "no-gemini-here");
    mkdirSync(empty, { recursive: true });
    expect((await api(server, "POST", "/api/agents", { name: "gem_missing", kind: "gemini", env: { PATH: empty } })).status).toBe(201);
    const { body } = await api<{ agents: AgentWithAvailability[] }>(server, "GET", "/api/agents");
    const hint = body.agents.find((a) => a.name === "gem_missing")?.availability.hint;
    expect(hint).toBe(
      "gemini was not found on PATH; install it with npm install -g @google/gemini-cli and give it GEMINI_API_KEY (since 2026-06-18 " +
        "it no longer serves individual Google accounts: those use the agy agent, Antigravity CLI), or set CORRAL_GEM_MISSING_BIN to its path",
    );
  });
});

describe("CORRAL_GEMINI_AGENT", () => {
  let pointed: TestServer;
  beforeAll(async () => {
    pointed = await startServer({ CORRAL_GEMINI_AGENT: "agy" });
  });
  afterAll(() => pointed.close());

  test("/mcp/gemini keeps pyCorral's names, and they run agy: a job, its answer, a follow-up", async () => {
    const client = await connectMcp(pointed, "/mcp/gemini");
    try {
      const tools = (await client.listTools()).tools;
      expect(tools.map((t) => t.name).sort()).toEqual(["gemini_done", "gemini_run", "gemini_run_async"]);
      expect(tools.find((t) => t.name === "gemini_run")?.description).toMatch(
        /^Delegate a task to agy \(Google Antigravity CLI.*\) \(CORRAL_GEMINI_AGENT=agy\)/,
      );
      const dir = workdir(pointed);
      const id = textOf(await client.callTool({ name: "gemini_run_async", arguments: { prompt: "write a.txt 1\nfirst turn", workdir: dir } }));
      await pointed.services.waits.waitFor([id], 30_000);
      const job = await pointed.services.jobs.get(id);
      expect(job).toMatchObject({ agent: "agy", status: "succeeded" });
      expect(job.invocation?.command).toMatch(/\/agy$/);
      expect(textOf(await client.callTool({ name: "gemini_done", arguments: { job_id: id } }))).toMatch(/^listo\n[\s\S]*first turn/);
      const again = textOf(await client.callTool({ name: "gemini_run", arguments: { prompt: "recall", session: id } }));
      expect(again).toMatch(/^ok\n[\s\S]*turn 1: write a.txt 1 \| first turn/);
    } finally {
      await client.close();
    }
  });

  test("a task-augmented gemini_run (MCP tasks, 2025-11-25) runs agy as well", async () => {
    const client = await connectMcp(pointed, "/mcp/gemini", pointed.auth, "legacy");
    try {
      // The SDK client learns from tools/list which tools take a task.
      const { tools } = await client.listTools();
      expect(tools.find((t) => t.name === "gemini_run")?.execution?.taskSupport).toBe("optional");
      const { task } = await client.request(
        {
          method: "tools/call",
          params: { name: "gemini_run", arguments: { prompt: "as a task", workdir: workdir(pointed) }, task: { ttl: 60_000 } },
        },
        CreateTaskResultSchema,
      );
      const id = /job (\w+)/.exec(task.statusMessage ?? "")?.[1];
      expect(id).toBeDefined();
      const [job] = await pointed.services.waits.waitFor([id!], 30_000);
      expect(job).toMatchObject({ agent: "agy", status: "succeeded" });
    } finally {
      await client.close();
    }
  });

  test("on /mcp too: gemini_run runs agy, and agy keeps its own tools", async () => {
    const client = await connectMcp(pointed);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(["gemini_run", "gemini_done", "agy_run", "agy_done"]));
      const ok = textOf(await client.callTool({ name: "gemini_run", arguments: { prompt: "via gemini_run", workdir: workdir(pointed) } }));
      expect(ok).toMatch(/agent agy · succeeded/);
    } finally {
      await client.close();
    }
  });

  test("with agy disabled, gemini_* calls say the setting chose it and how out; with gemini disabled too, the mount says so", async () => {
    await pointed.services.agents.update("agy", { enabled: false });
    try {
      const client = await connectMcp(pointed, "/mcp/gemini");
      try {
        const refused = textOf(await client.callTool({ name: "gemini_run_async", arguments: { prompt: "hi", workdir: workdir(pointed) } }));
        expect(refused).toBe(
          "error: agent: agent agy is disabled; enable it to run jobs (CORRAL_GEMINI_AGENT=agy makes gemini_run and gemini_run_async run it: " +
            "add or enable the agent agy, or unset CORRAL_GEMINI_AGENT to run gemini again)",
        );
      } finally {
        await client.close();
      }
      await pointed.services.agents.update("gemini", { enabled: false });
      const res = await fetch(`${pointed.url}/mcp/gemini`, {
        method: "POST",
        headers: { ...pointed.auth, "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
        }),
      });
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: { message: string } }).error.message).toBe(
        "CORRAL_GEMINI_AGENT=agy makes /mcp/gemini run the agent agy, and no enabled agent is named agy: add or enable it (see GET /api/agents), or unset CORRAL_GEMINI_AGENT",
      );
      if (TEST_MCP_ERA === "legacy") await expect(connectMcp(pointed, "/mcp/gemini")).rejects.toThrow(/CORRAL_GEMINI_AGENT/);
    } finally {
      await pointed.services.agents.update("agy", { enabled: true });
      await pointed.services.agents.update("gemini", { enabled: true });
    }
  });

  test("naming an agent that does not exist: the start says so, and gemini_run's refusal names the setting and the fix", async () => {
    const logs: string[] = [];
    const logStream = new Writable({
      write(chunk, _encoding, done) {
        logs.push(String(chunk));
        done();
      },
    });
    const typo = await startServer({ CORRAL_GEMINI_AGENT: "agyy", CORRAL_LOG_LEVEL: "warn" }, { logStream });
    try {
      const warned = logs.map((l) => JSON.parse(l) as { level: number; msg: string }).find((l) => l.msg.startsWith("CORRAL_GEMINI_AGENT"));
      expect(warned).toMatchObject({
        level: 40,
        msg:
          "CORRAL_GEMINI_AGENT=agyy points gemini_run, gemini_run_async and /mcp/gemini at the agent agyy, which does not exist: " +
          "they fail until it is added (GET /api/agents), or unset CORRAL_GEMINI_AGENT",
      });
      const client = await connectMcp(typo, "/mcp/gemini");
      try {
        const refused = textOf(await client.callTool({ name: "gemini_run", arguments: { prompt: "hi", workdir: workdir(typo) } }));
        expect(refused).toMatch(
          /^error: agent: agent agyy does not exist; .*\(CORRAL_GEMINI_AGENT=agyy makes gemini_run and gemini_run_async run it: /,
        );
        expect(refused).toContain("unset CORRAL_GEMINI_AGENT to run gemini again");
      } finally {
        await client.close();
      }
    } finally {
      await typo.close();
    }
  });

  test("a value that is no agent name is refused at start, naming the setting", () => {
    expect(() => loadConfig({ CORRAL_GEMINI_AGENT: "Antigravity CLI" })).toThrow(ConfigError);
    expect(() => loadConfig({ CORRAL_GEMINI_AGENT: "Antigravity CLI" })).toThrow(/CORRAL_GEMINI_AGENT: use 1-40 lowercase letters/);
    expect(loadConfig({ CORRAL_GEMINI_AGENT: "gemini" }).toolAgents).toEqual({});
    expect(loadConfig({}).toolAgents).toEqual({});
  });
});
