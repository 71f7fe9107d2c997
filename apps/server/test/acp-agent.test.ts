import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { readableText, type Job, type OutputPage, type ReadablePage } from "@corral/shared";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { api, fixturesDir, startServer, until, type TestServer } from "./helpers.js";
import { connectMcp, textOf } from "./mcp-client.js";
import { hasBwrap } from "./required-tool.js";

// The acp kind end to end: a real server runs Corral's ACP client as the job's worker, which
// starts a scripted ACP agent built with the official library (fixtures/acp-agent.mjs).
const fakeAgent = path.join(fixturesDir, "acp-agent.mjs");

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
  const env = { ACP_FAKE_SESSIONS: path.join(server.root, "acp-sessions") };
  // Named as a known agent (the gemini preset), the scripted agent gets what Corral does for that one.
  const gemini = path.join(server.root, "bin", "gemini");
  mkdirSync(path.dirname(gemini), { recursive: true });
  writeFileSync(gemini, `#!/bin/sh\nexec "${process.execPath}" "${fakeAgent}" "$@"\n`);
  chmodSync(gemini, 0o755);
  for (const [name, extra] of [
    ["fake_acp", {}],
    ["fake_acp_noload", { args: [fakeAgent, "--no-load"] }],
    ["fake_acp_deny", { permissions: "deny" }],
    ["fake_acp_late", { args: [fakeAgent, "--late-replay"] }],
    ["fake_gemini", { command: gemini, args: undefined }],
  ] as const) {
    const created = await api(server, "POST", "/api/agents", {
      name,
      kind: "acp",
      command: process.execPath,
      args: [fakeAgent],
      workdir: workdir(name),
      env,
      ...extra,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  }
});
afterAll(() => server.close());

function workdir(name: string): string {
  const dir = path.join(server.root, "w", name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

async function run(body: Record<string, unknown>): Promise<Job> {
  const launched = await api<Job>(server, "POST", "/api/jobs", body);
  expect(launched.status, JSON.stringify(launched.body)).toBe(201);
  const [job] = await server.services.waits.waitFor([launched.body.id], 60_000);
  return job as Job;
}

const readableOf = async (id: string) => (await api<ReadablePage>(server, "GET", `/api/jobs/${id}/readable`)).body.events.map(readableText);

describe("an acp agent", () => {
  let first: Job;
  const dir = () => path.join(server.root, "w", "turns");

  test("a job is one session: the answer, tool calls with their results, permission answers, a plan and usage", async () => {
    workdir("turns");
    writeFileSync(path.join(dir(), "in.txt"), "from the workdir");
    first = await run({
      agent: "fake_acp",
      workdir: dir(),
      prompt: "say hello world\nwrite out.txt written by the agent\nread in.txt\nrun rm -rf /\nplan\nsay all done",
    });
    expect(first.status, first.error ?? "").toBe("succeeded");
    expect(first.finalText).toBe("all done");
    expect(readFileSync(path.join(dir(), "out.txt"), "utf8")).toBe("written by the agent");
    expect(first.workerSession).toMatch(/^sess-/);
    // The turn's tokens (cache reads counted as input) and the session's cost in dollars.
    expect(first.usage).toMatchObject({ inputTokens: 1100, outputTokens: 200, costUsd: 0.0125 });
    const lines = await readableOf(first.id);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^· new ACP session sess-.* with fake-acp 1\.0\.0$/),
        expect.stringMatching(/^→ Write out\.txt .*out\.txt$/),
        "· permission allowed: Write out.txt (inside the workdir)",
        expect.stringMatching(/^→ write_text_file .*out\.txt$/),
        "← ok wrote out.txt",
        "· permission denied: rm -rf / (execute tools are not confined to the workdir (permissions: workdir))",
        "← error: denied",
        "· plan: ✓ look · ▸ change · ○ test",
      ]),
    );
    // Answer chunks continue each other.
    expect(lines.join("")).toContain("hello world");
    expect(lines.join("")).toContain("the command was denied");
  });

  test("the MCP door runs it like any agent, with the pyCorral answers", async () => {
    const client = await connectMcp(server);
    try {
      const result = await client.callTool({ name: "fake_acp_run", arguments: { prompt: "say over mcp", workdir: workdir("mcp") } });
      expect(textOf(result)).toMatch(/^ok\b[\s\S]*over mcp/);
    } finally {
      await client.close();
    }
  });

  test("a follow-up loads the earlier job's session; what the load replays is not this job's output", async () => {
    const next = await run({ agent: "fake_acp", workdir: dir(), session: first.id, prompt: "recall" });
    expect(next.status, next.error ?? "").toBe("succeeded");
    expect(next.workerSession).toBe(first.workerSession);
    expect(next.finalText).toMatch(/^prompts so far: say hello world/);
    const lines = await readableOf(next.id);
    expect(lines.some((l) => l.startsWith("· continued ACP session"))).toBe(true);
    expect(lines.join("\n")).not.toContain("replayed answer");
  });

  test("a follow-up of an agent without session/load fails saying so", async () => {
    const earlier = await run({ agent: "fake_acp_noload", workdir: workdir("noload"), prompt: "say first" });
    expect(earlier.status).toBe("succeeded");
    const next = await run({ agent: "fake_acp_noload", workdir: workdir("noload"), session: earlier.id, prompt: "recall" });
    expect(next.status).toBe("failed");
    expect(next.error).toMatch(/cannot continue a session: it does not offer session\/load/);
  });

  test("cancel mid-turn sends session/cancel: the turn ends cancelled, then the job", async () => {
    const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "fake_acp", workdir: workdir("cancel"), prompt: "say starting\nsleep 60" });
    const id = launched.body.id;
    await until(async () => {
      const out = await api<OutputPage>(server, "GET", `/api/jobs/${id}/output`);
      // The answer's second chunk: the turn is under way (its sleep follows).
      return out.body.chunks.some((c) => c.text.includes('"text":"ting"')) ? true : undefined;
    }, 30_000);
    const cancelled = await api(server, "POST", `/api/jobs/${id}/cancel`);
    expect(cancelled.status).toBeLessThan(300);
    const [job] = await server.services.waits.waitFor([id], 30_000);
    expect(job?.status).toBe("cancelled");
    // The agent answered the cancel: its turn ended with stopReason cancelled, never killed first.
    const out = await api<OutputPage>(server, "GET", `/api/jobs/${id}/output`);
    expect(out.body.chunks.map((c) => c.text).join("")).toContain('"stopReason":"cancelled"');
    expect(job?.killedAt).toBeNull();
  }, 60_000);

  test.skipIf(!hasBwrap())(
    "in a bubblewrap sandbox too, the cancel reaches the client, not bwrap: the turn ends cancelled",
    async () => {
      const created = await api(server, "POST", "/api/agents", {
        name: "fake_acp_boxed",
        kind: "acp",
        command: process.execPath,
        args: [fakeAgent],
        workdir: workdir("boxed"),
        sandbox: "bwrap",
        env: { ACP_FAKE_SESSIONS: path.join(workdir("boxed"), ".sessions") },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "fake_acp_boxed", prompt: "say starting\nsleep 60" });
      const id = launched.body.id;
      await until(async () => {
        const out = await api<OutputPage>(server, "GET", `/api/jobs/${id}/output`);
        // Generous: the sandboxed client starts from source under tsx, slow on a busy machine (CI runs suites side by side).
        return out.body.chunks.some((c) => c.text.includes('"text":"ting"')) ? true : undefined;
      }, 90_000);
      expect((await api(server, "POST", `/api/jobs/${id}/cancel`)).status).toBeLessThan(300);
      const [job] = await server.services.waits.waitFor([id], 60_000);
      expect(job?.status).toBe("cancelled");
      const out = await api<OutputPage>(server, "GET", `/api/jobs/${id}/output`);
      expect(out.body.chunks.map((c) => c.text).join("")).toContain('"stopReason":"cancelled"');
    },
    180_000,
  );

  test("the job's model is chosen through the session's model option; one the agent lacks is refused by name", async () => {
    const chosen = await run({ agent: "fake_acp", workdir: workdir("model"), model: "smart", prompt: "model" });
    expect(chosen.finalText).toBe("model smart");
    const missing = await run({ agent: "fake_acp", workdir: workdir("model"), model: "huge", prompt: "model" });
    expect(missing.status).toBe("failed");
    expect(missing.error).toMatch(/has no model huge; it offers fast, smart/);
  });

  test("permissions deny: every request is denied and nothing is written", async () => {
    const job = await run({ agent: "fake_acp_deny", workdir: workdir("deny"), prompt: "write out.txt no\nread in.txt\nsay end" });
    expect(job.status).toBe("succeeded");
    expect(existsSync(path.join(workdir("deny"), "out.txt"))).toBe(false);
    const lines = await readableOf(job.id);
    expect(lines).toContain("· permission denied: Write out.txt (the agent's permissions are deny)");
    expect(lines).toContain("← error: the agent's permissions are deny");
  });

  test("a huge answer and a huge tool input: every line of the output short enough to be read as one event, the answer kept as far as any is", async () => {
    const job = await run({ agent: "fake_acp", workdir: workdir("huge"), prompt: "huge 3072" });
    expect(job.status, job.error ?? "").toBe("succeeded");
    // A job's answer is kept to 256 KiB, saying so (it was lost whole when its line was cut in pieces).
    expect(job.finalText).toMatch(/^z{262144}\n\[…truncated\]$/);
    let out = "";
    for (let cursor = 0, complete = false; !complete; ) {
      const page = (await api<OutputPage>(server, "GET", `/api/jobs/${job.id}/output?cursor=${cursor}&limit=4194304`)).body;
      out += page.chunks.map((c) => c.text).join("");
      ({ cursor, complete } = page);
    }
    const lines = out.split("\n");
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThan(256 * 1024);
    expect(out).toContain("…[cut: 3145728 characters]");
  }, 60_000);

  test("a tsconfig.json in the workdir does not reach the client's own imports (run from sources, under tsx)", async () => {
    const dir = workdir("tsconfig");
    writeFileSync(
      path.join(dir, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { baseUrl: ".", paths: { "@corral/shared": ["./evil.mts"] } } }),
    );
    const shared = path.resolve(import.meta.dirname, "../../../packages/shared/src/index.ts");
    writeFileSync(
      path.join(dir, "evil.mts"),
      `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(path.join(dir, "HIJACKED"))}, "x");\nexport * from ${JSON.stringify(shared)};\n` +
        `export const AcpPermissionsSchema = { safeParse: () => ({ success: true, data: "allow" }) };\n`,
    );
    const job = await run({ agent: "fake_acp_deny", workdir: dir, prompt: "write out.txt no\nsay end" });
    expect(job.status, job.error ?? "").toBe("succeeded");
    expect(existsSync(path.join(dir, "HIJACKED"))).toBe(false);
    expect(existsSync(path.join(dir, "out.txt"))).toBe(false);
    expect(await readableOf(job.id)).toContain("· permission denied: Write out.txt (the agent's permissions are deny)");
  });

  test("file requests stay inside the workdir: a path outside and a symlink out are refused", async () => {
    const wd = workdir("links");
    symlinkSync("/etc", path.join(wd, "etc"));
    const job = await run({ agent: "fake_acp", workdir: wd, prompt: "read /etc/hostname\nread etc/hostname\nwrite etc/corral-was-here x\nsay end" });
    expect(job.status).toBe("succeeded");
    const lines = await readableOf(job.id);
    expect(lines.filter((l) => /^← error: refused/.test(l))).toHaveLength(2);
    expect(lines.some((l) => l.startsWith("· permission denied: Write etc/corral-was-here"))).toBe(true);
    expect(existsSync("/etc/corral-was-here")).toBe(false);
  });

  test("a load whose replay trails its answer (Gemini CLI's) keeps the replay out of the follow-up", async () => {
    const earlier = await run({ agent: "fake_acp_late", workdir: workdir("late"), prompt: "say first" });
    expect(earlier.status).toBe("succeeded");
    // The turn lasts a while, so a replay that came during it would be in its output.
    const next = await run({ agent: "fake_acp_late", session: earlier.id, prompt: "sleep 0.5\nrecall" });
    expect(next.status, next.error ?? "").toBe("succeeded");
    expect(next.finalText).toBe("prompts so far: say first");
    const out = await api<OutputPage>(server, "GET", `/api/jobs/${next.id}/output`);
    expect(out.body.chunks.map((c) => c.text).join("")).not.toContain("replayed answer");
  });

  test("a session the agent cannot load fails the follow-up, saying which and the agent's why", async () => {
    const earlier = await run({ agent: "fake_acp", workdir: workdir("lost"), prompt: "say first" });
    rmSync(path.join(server.root, "acp-sessions", `${earlier.workerSession}.json`));
    const next = await run({ agent: "fake_acp", session: earlier.id, prompt: "recall" });
    expect(next.status).toBe("failed");
    expect(next.error).toMatch(new RegExp(`could not load session ${earlier.workerSession} to continue it: Internal error: .*ENOENT`));
  });

  test("a tool call the agent reports first by asking permission (Gemini CLI) opens in the output", async () => {
    const job = await run({ agent: "fake_acp", workdir: workdir("ask"), prompt: "ask new.txt asked\nsay end" });
    expect(job.status).toBe("succeeded");
    expect(readFileSync(path.join(workdir("ask"), "new.txt"), "utf8")).toBe("asked");
    const out = await api<OutputPage>(server, "GET", `/api/jobs/${job.id}/output`);
    const updates = out.body.chunks
      .map((c) => c.text)
      .join("")
      .split("\n")
      .filter((l) => l.includes('"toolCallId":"call-1"'))
      .map((l) => (JSON.parse(l) as { update: { sessionUpdate: string; status: string } }).update);
    expect(updates.map((u) => [u.sessionUpdate, u.status])).toEqual([
      ["tool_call", "pending"],
      ["tool_call_update", "completed"],
    ]);
    const lines = await readableOf(job.id);
    const call = lines.findIndex((l) => /^→ Writing to new\.txt .*new\.txt/.test(l));
    expect(call, lines.join("\n")).toBeGreaterThanOrEqual(0);
    expect(lines.indexOf("· permission allowed: Writing to new.txt (inside the workdir)")).toBeGreaterThan(call);
    expect(lines).toContain("← ok wrote new.txt");
  });

  test("a file that does not exist is answered Resource not found (-32002), as ACP has it", async () => {
    const wd = workdir("missing");
    const job = await run({ agent: "fake_acp", workdir: wd, prompt: "read missing.txt\nsay end" });
    expect(job.status).toBe("succeeded");
    const lines = await readableOf(job.id);
    expect(lines).toContain(`← error: -32002 Resource not found: ${path.join(wd, "missing.txt")}`);
    expect(lines).toContain("← error: no such file");
  });

  test("a known agent that cannot take that answer (gemini) reads its own files: Corral offers it writes only", async () => {
    const own = await run({ agent: "fake_gemini", workdir: workdir("caps"), prompt: "caps" });
    expect(own.status, own.error ?? "").toBe("succeeded");
    expect(own.finalText).toBe("reads false, writes true");
    expect(own.invocation?.args).toContain("--agent-reads");
    expect((await run({ agent: "fake_acp", workdir: workdir("caps"), prompt: "caps" })).finalText).toBe("reads true, writes true");
  });

  test("an agent that ends its turn cancelled on a refusal (Codex) fails the job naming what was refused", async () => {
    const job = await run({ agent: "fake_acp_deny", workdir: workdir("refusal"), prompt: "patch out.txt no\nsay never" });
    expect(job.status).toBe("failed");
    expect(job.error).toMatch(/the agent stopped its turn when Edit out\.txt was refused permission/);
    expect(existsSync(path.join(workdir("refusal"), "out.txt"))).toBe(false);
  });

  test("a turn that stops short fails the job with why", async () => {
    const job = await run({ agent: "fake_acp", workdir: workdir("short"), prompt: "say partial\nstop max_tokens" });
    expect(job.status).toBe("failed");
    expect(job.error).toMatch(/token limit/);
  });
});
