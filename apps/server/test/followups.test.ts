import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { isFinalStatus, type Job, type JobStatus, type JobThread } from "@corral/shared";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { jobDataPaths } from "../src/jobs/worker-process.js";
import { startFakeOllama, type FakeOllama } from "./fixtures/fake-ollama.js";
import { api, killGroupOf, sleep, startServer, tempDir, until, type TestServer } from "./helpers.js";
import { connectMcp, textOf } from "./mcp-client.js";

// The test kind parrot resumes its sessions (fixtures/parrot): the follow-up plumbing is tested
// without the real CLIs' adapters, whose resume flags the compatibility suite proves.
vi.mock("../src/agents/kinds/index.js", async (importOriginal) => {
  const { agentKindModules } = await importOriginal<typeof import("../src/agents/kinds/index.js")>();
  const { parrot } = await import("./fixtures/parrot/kind.js");
  return { agentKindModules: [...agentKindModules, parrot] };
});

const root = tempDir();
let server: TestServer;
let mcp: Client;
let fake: FakeOllama;
const cleanups: (() => Promise<unknown> | undefined)[] = [];

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  rmSync(root, { recursive: true, force: true });
});

let n = 0;
const workdir = () => {
  const dir = path.join(root, `w${++n}`);
  mkdirSync(dir, { recursive: true });
  return dir;
};

async function launch(body: Record<string, unknown>): Promise<Job> {
  const res = await api<Job>(server, "POST", "/api/jobs", body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function ended(id: string): Promise<Job> {
  const [job] = await server.services.waits.waitFor([id], 30_000);
  if (!job || !isFinalStatus(job.status)) throw new Error(`job ${id} did not end`);
  return job;
}

const run = async (body: Record<string, unknown>) => ended((await launch(body)).id);

type Refusal = { status: number; body: { error: string; field?: string; code: string } };
const refused = (body: Record<string, unknown>) => api(server, "POST", "/api/jobs", body) as Promise<Refusal>;

async function tool(name: string, args: Record<string, unknown>): Promise<{ text: string; isError: boolean }> {
  const result = await mcp.callTool({ name, arguments: args });
  return { text: textOf(result), isError: result.isError === true };
}

const jobCount = async () => (await api<{ total: number }>(server, "GET", "/api/jobs?limit=1")).body.total;

/** A parrot job lost while the server was down: its worker died before it said a word of its session. */
let lostId = "";

beforeAll(async () => {
  const first = await startServer({}, { root });
  const lost = await first.services.launches.launch("parrot", { prompt: "sleep 30", workdir: workdir() }, "rest");
  await until(async () => ((await first.services.jobs.get(lost.id)).pid ? true : undefined));
  const pid = (await first.services.jobs.get(lost.id)).pid as number;
  await first.app.close();
  killGroupOf(pid);
  await sleep(300);
  rmSync(jobDataPaths(path.join(root, "data"), lost.id, 1).exit, { force: true });
  lostId = lost.id;

  fake = await startFakeOllama();
  cleanups.push(() => fake.close());
  server = await startServer({ CORRAL_OLLAMA_URL: fake.url, CORRAL_OLLAMA_MODEL: "qwen2.5:7b" }, { root });
  cleanups.push(() => server.close());
  mcp = await connectMcp(server);
  cleanups.push(() => mcp.close());
  await server.services.agents.update("parrot", { maxConcurrent: 10 });
}, 60_000);

describe("a follow-up continues the earlier job's conversation", () => {
  test("REST: it resumes the worker's session in the earlier job's workdir with its model; a chain of turns shares one conversation", async () => {
    const first = await run({ agent: "parrot", prompt: "the answer is 42", workdir: workdir(), model: "parrot-big" });
    expect(first.status).toBe("succeeded");
    expect(first.workerSession).toMatch(/^[0-9a-f-]{36}$/);
    expect(first).toMatchObject({ conversationId: first.id, followUpOf: null });

    const second = await run({ agent: "parrot", prompt: "what was the answer?", session: first.id });
    expect(second).toMatchObject({
      status: "succeeded",
      workdir: first.workdir,
      model: "parrot-big",
      followUpOf: first.id,
      conversationId: first.id,
      workerSession: first.workerSession,
    });
    expect(second.invocation?.args).toContain(`--resume=${first.workerSession}`);
    // The worker's second request carries the first turn.
    expect(second.finalText).toBe("the answer is 42\nwhat was the answer?");

    const third = await run({ agent: "parrot", prompt: "and doubled?", session: second.id });
    expect(third).toMatchObject({ status: "succeeded", followUpOf: second.id, conversationId: first.id });
    expect(third.finalText).toBe("the answer is 42\nwhat was the answer?\nand doubled?");

    for (const id of [first.id, second.id, third.id]) {
      const thread = await api<JobThread>(server, "GET", `/api/jobs/${id}/thread`);
      expect(thread.status).toBe(200);
      expect(thread.body.conversationId).toBe(first.id);
      expect(thread.body.jobs.map((j) => j.id)).toEqual([first.id, second.id, third.id]);
    }
    // A job with no follow-up is a thread of one.
    const alone = await run({ agent: "parrot", prompt: "alone", workdir: workdir() });
    expect((await api<JobThread>(server, "GET", `/api/jobs/${alone.id}/thread`)).body.jobs.map((j) => j.id)).toEqual([alone.id]);
    expect((await api(server, "GET", "/api/jobs/abcdef123456/thread")).status).toBe(404);
    const hostile = await api<{ field: string }>(server, "GET", `/api/jobs/${encodeURIComponent("../jobs")}/thread`);
    expect(hostile.status).toBe(400);
    expect(hostile.body.field).toBe("id");
  });

  test("a follow-up given its own model keeps it; another workdir is refused (the CLI finds its session only where it ran), never a fresh start", async () => {
    const first = await run({ agent: "parrot", prompt: "one", workdir: workdir() });
    const own = await run({ agent: "parrot", prompt: "two", session: first.id, model: "parrot-small" });
    expect(own.model).toBe("parrot-small");
    expect(own.workdir).toBe(first.workdir);
    expect(own.status).toBe("succeeded");
    const before = await jobCount();
    const elsewhere = await refused({ agent: "parrot", prompt: "three", session: own.id, workdir: workdir() });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.field).toBe("workdir");
    expect(elsewhere.body.error).toContain(first.workdir);
    expect(await jobCount()).toBe(before);
  });

  test("the worker's session is stored before the job's end is announced", async () => {
    const seen: Job[] = [];
    const onJob = (job: Job) => {
      if (isFinalStatus(job.status)) seen.push(job);
    };
    server.services.jobEvents.on("job", onJob);
    try {
      const job = await run({ agent: "parrot", prompt: "hi", workdir: workdir() });
      const announced = seen.find((j) => j.id === job.id);
      expect(announced?.workerSession).toBeTruthy();
      expect(announced?.workerSession).toBe(job.workerSession);
    } finally {
      server.services.jobEvents.off("job", onJob);
    }
  });

  test("a retry of a follow-up resumes the same session again", async () => {
    const first = await run({ agent: "parrot", prompt: "start", workdir: workdir() });
    const retried = await run({
      agent: "parrot",
      prompt: "flaky\nexit 75",
      session: first.id,
      retry: { maxAttempts: 2, exitCodes: [75], backoffS: 0 },
    });
    expect(retried).toMatchObject({ status: "failed", attempt: 2, followUpOf: first.id });
    // The invocation is the last attempt's.
    expect(retried.invocation?.args).toContain(`--resume=${first.workerSession}`);
    expect(retried.finalText).toBe("start\nflaky\nexit 75\nflaky\nexit 75");
  });

  test("REST: agents say whether their kind continues a conversation", async () => {
    const { body } = await api<{ agents: { name: string; resumes: boolean }[] }>(server, "GET", "/api/agents");
    const resumes = Object.fromEntries(body.agents.map((a) => [a.name, a.resumes]));
    expect(resumes).toMatchObject({ parrot: true, ollama: true, qwen: true, kiro: false });
  });

  test("MCP: <agent>_run and _run_async take session, and their schemas say how to follow up", async () => {
    const { tools } = await mcp.listTools();
    const session = (name: string) =>
      (tools.find((t) => t.name === name)?.inputSchema.properties as Record<string, { description?: string }>)?.session;
    expect(session("parrot_run_async")?.description).toMatch(/ended job's id to continue/);
    expect(session("parrot_run")?.description).toMatch(/to continue/);
    // An agent whose kind cannot continue a conversation does not show the field (it refuses it: below).
    expect(session("kiro_run_async")).toBeUndefined();

    const first = await tool("parrot_run_async", { prompt: "remember: blue", workdir: workdir() });
    expect(first.isError).toBe(false);
    await ended(first.text);
    const second = await tool("parrot_run", { prompt: "which colour?", session: first.text });
    expect(second.isError, second.text).toBe(false);
    expect(second.text).toMatch(/^ok\b/);
    expect(second.text).toContain("remember: blue\nwhich colour?");
    expect(second.text).toMatch(new RegExp(`^job [a-z0-9]+ · agent parrot · succeeded · exit 0 · follow-up of ${first.text} · `, "m"));
    const secondId = /job ([a-z0-9]+) ·/.exec(second.text)?.[1] ?? "";
    const third = await tool("parrot_run_async", { prompt: "and again?", session: secondId });
    const job = await ended(third.text);
    expect(job).toMatchObject({ status: "succeeded", followUpOf: secondId, conversationId: first.text });
  });
});

describe("a follow-up that cannot continue is refused, naming session", () => {
  test("an unknown job, another agent's job, a kind that cannot resume, a job that reported no session: REST and MCP", async () => {
    const parrotJob = await run({ agent: "parrot", prompt: "hello", workdir: workdir() });
    const kiroJob = await run({ agent: "kiro", prompt: "print 1", workdir: workdir() });
    const silent = await run({ agent: "parrot", prompt: "nosession", workdir: workdir() });
    expect(silent).toMatchObject({ status: "succeeded", workerSession: null });
    const cases: { agent: string; session: string; status: number; error: RegExp }[] = [
      { agent: "parrot", session: "abcdef123456", status: 404, error: /job abcdef123456 not found/ },
      { agent: "parrot", session: kiroJob.id, status: 400, error: /ran on kiro, not parrot/ },
      { agent: "kiro", session: kiroJob.id, status: 400, error: /kiro cannot continue a conversation/ },
      { agent: "kiro", session: parrotJob.id, status: 400, error: /ran on parrot, not kiro/ },
      { agent: "parrot", session: silent.id, status: 409, error: /has no worker session to resume: its worker reported no session id/ },
    ];
    const before = await jobCount();
    for (const c of cases) {
      const res = await refused({ agent: c.agent, prompt: "go on", session: c.session });
      expect(res.status, JSON.stringify(res.body)).toBe(c.status);
      expect(res.body.field).toBe("session");
      expect(res.body.error).toMatch(c.error);
      const viaMcp = await tool(`${c.agent}_run_async`, { prompt: "go on", session: c.session });
      expect(viaMcp.isError).toBe(true);
      expect(viaMcp.text).toMatch(c.error);
      expect(viaMcp.text).toMatch(/^error: session: /);
    }
    expect(await jobCount()).toBe(before);
  });

  test("hostile session values are refused as bad input, and nothing is launched", async () => {
    const hostile: unknown[] = [
      "",
      "../../../etc/passwd",
      "abc' OR '1'='1",
      "abcdef; drop table jobs",
      "ABCDEF123456",
      "abcdef\u0000123456",
      "abcdef123456\n",
      "１２３４５６",
      "a".repeat(100_000),
      "abc",
      123456,
      null,
      { $ne: null },
      ["abcdef123456"],
      true,
    ];
    const before = await jobCount();
    for (const session of hostile) {
      const res = await refused({ agent: "parrot", prompt: "go on", session });
      expect(res.status, `${JSON.stringify(session).slice(0, 40)}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.field).toBe("session");
      const viaMcp = await tool("parrot_run_async", { prompt: "go on", session });
      expect(viaMcp.isError).toBe(true);
      expect(viaMcp.text).toContain("session");
    }
    expect(await jobCount()).toBe(before);
    expect((await api(server, "GET", "/api/health")).status).toBe(200);
  });
});

describe("the earlier job in every state", () => {
  const workdirs: Record<string, string> = {};
  const ids: Record<string, string> = {};
  const idOf = (key: string) => ids[key] ?? "";

  beforeAll(async () => {
    // One parrot agent runs one job at a time: a hanging job keeps the next one queued.
    await server.services.agents.create({ name: "single", kind: "parrot", maxConcurrent: 1 });
    const go = async (key: string, body: Record<string, unknown>) => {
      workdirs[key] = workdir();
      ids[key] = (await launch({ agent: "parrot", workdir: workdirs[key], ...body })).id;
    };
    workdirs.running = workdir();
    ids.running = (await launch({ agent: "single", prompt: "hang", workdir: workdirs.running })).id;
    await until(async () => ((await api<Job>(server, "GET", `/api/jobs/${idOf("running")}`)).body.status === "running" ? true : undefined));
    ids.queued = (await launch({ agent: "single", prompt: "queued", workdir: workdir() })).id;
    ids.cancelledQueued = (await launch({ agent: "single", prompt: "never", workdir: workdir() })).id;
    await api(server, "POST", `/api/jobs/${idOf("cancelledQueued")}/cancel`);
    await go("succeeded", { prompt: "fine" });
    await go("failed", { prompt: "broken\nexit 3" });
    await go("timedOut", { prompt: "slow\nhang", timeoutS: 3 });
    await go("cancelled", { prompt: "stopped\nhang" });
    await go("budget", { prompt: "costly\nhang", maxTokens: 1 });
    // Cancelled once it has said its session (it hangs after that).
    await until(async () =>
      (await api<{ text: string }>(server, "GET", `/api/jobs/${idOf("cancelled")}/tail`)).body.text.includes('"bye"') ? true : undefined,
    );
    await api(server, "POST", `/api/jobs/${idOf("cancelled")}/cancel`);
    for (const key of ["succeeded", "failed", "timedOut", "cancelled", "budget"]) await ended(idOf(key));
  }, 60_000);

  const statuses: [string, JobStatus][] = [
    ["succeeded", "succeeded"],
    ["failed", "failed"],
    ["timedOut", "timed_out"],
    ["cancelled", "cancelled"],
    ["budget", "budget_exceeded"],
  ];

  test.each(statuses)("ended %s: the follow-up resumes its session and carries its turn", async (key, status) => {
    const earlier = (await api<Job>(server, "GET", `/api/jobs/${idOf(key)}`)).body;
    expect(earlier.status).toBe(status);
    expect(earlier.workerSession).toBeTruthy();
    const next = await run({ agent: "parrot", prompt: "go on", session: earlier.id });
    expect(next).toMatchObject({ status: "succeeded", followUpOf: earlier.id, workdir: workdirs[key] });
    expect(next.finalText).toBe(`${earlier.prompt}\ngo on`);
  });

  test("queued and running: refused until it has ended (409), naming the job", async () => {
    for (const key of ["queued", "running"]) {
      const res = await refused({ agent: "single", prompt: "go on", session: idOf(key) });
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ field: "session", code: "conflict", jobId: idOf(key) });
      expect(res.body.error).toMatch(new RegExp(`is still ${key}; wait for it to end`));
    }
  });

  test("cancelled before it started, and lost: no session to resume, refused (409)", async () => {
    const never = await refused({ agent: "single", prompt: "go on", session: idOf("cancelledQueued") });
    expect(never.status).toBe(409);
    expect(never.body.field).toBe("session");
    expect(never.body.error).toMatch(/no worker session to resume: it never started \(cancelled\)/);
    const lost = (await api<Job>(server, "GET", `/api/jobs/${lostId}`)).body;
    expect(lost.status).toBe("lost");
    const res = await refused({ agent: "parrot", prompt: "go on", session: lostId });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatch(/no worker session to resume: its worker reported no session id \(lost\)/);
  });

  afterAll(async () => {
    for (const key of ["queued", "running"]) await api(server, "POST", `/api/jobs/${idOf(key)}/cancel`);
  });
});

describe("a follow-up across a restart", () => {
  test("a follow-up still queued when the server stops resumes the earlier session after the next start", async () => {
    const own = tempDir();
    const dir = path.join(own, "w");
    mkdirSync(dir);
    try {
      const before = await startServer({}, { root: own });
      const { jobs, launches, waits, agents } = before.services;
      await agents.update("parrot", { maxConcurrent: 1 });
      const first = await launches.launch("parrot", { prompt: "before the restart", workdir: dir }, "rest");
      const [ran] = await waits.waitFor([first.id], 30_000);
      const blocker = await launches.launch("parrot", { prompt: "hang", workdir: path.join(own, "b") }, "rest");
      await until(async () => ((await jobs.get(blocker.id)).status === "running" ? true : undefined));
      const next = await launches.launch("parrot", { prompt: "after the restart", session: first.id }, "rest");
      expect((await jobs.get(next.id)).status).toBe("queued");
      await before.app.close();

      const after = await startServer({}, { root: own });
      try {
        await after.services.cancels.cancel(blocker.id);
        const [done] = await after.services.waits.waitFor([next.id], 30_000);
        expect(done).toMatchObject({ status: "succeeded", followUpOf: first.id, conversationId: first.id, workdir: dir });
        expect(done?.invocation?.args).toContain(`--resume=${ran?.workerSession}`);
        expect(done?.finalText).toBe("before the restart\nafter the restart");
      } finally {
        await after.close();
      }
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });
});

describe("Ollama: the history is kept in the registry and sent again", () => {
  test("the follow-up's request carries the first turn's user, assistant and tool messages; a chain carries every turn", async () => {
    // Writes note.txt when asked to, else answers the latest prompt.
    fake.script("qwen2.5:7b", (body) => {
      const last = body.messages.at(-1);
      if (last?.role === "tool") return { content: "wrote note.txt" };
      if (last?.content === "write the note") return { toolCalls: [{ name: "write_file", arguments: { path: "note.txt", content: "42" } }] };
      return { content: `answer to: ${last?.content}` };
    });
    const first = await run({ agent: "ollama", prompt: "write the note", workdir: workdir() });
    expect(first.status, first.error ?? "").toBe("succeeded");
    expect(first.workerSession).toBeNull();
    const chatsBefore = fake.chats.length;
    const second = await run({ agent: "ollama", prompt: "what is in it?", session: first.id });
    expect(second, second.error ?? "").toMatchObject({ status: "succeeded", followUpOf: first.id, conversationId: first.id, workdir: first.workdir });
    const request = fake.chats[chatsBefore];
    expect(request?.messages.map((m) => [m.role, m.content])).toEqual([
      ["system", expect.any(String)],
      ["user", "write the note"],
      ["assistant", ""],
      ["tool", expect.stringContaining("note.txt")],
      ["assistant", "wrote note.txt"],
      ["user", "what is in it?"],
    ]);
    expect(request?.messages[2]?.tool_calls).toEqual([{ function: { name: "write_file", arguments: { path: "note.txt", content: "42" } } }]);
    expect(request?.messages[3]?.tool_name).toBe("write_file");

    const third = await run({ agent: "ollama", prompt: "thanks", session: second.id });
    expect(third.status).toBe("succeeded");
    const last = fake.chats.at(-1);
    expect(last?.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["write the note", "what is in it?", "thanks"]);
    expect(last?.messages.filter((m) => m.role === "assistant").map((m) => m.content)).toEqual(["", "wrote note.txt", "answer to: what is in it?"]);
    const output = await api<{ text: string }>(server, "GET", `/api/jobs/${third.id}/tail`);
    expect(output.body.text).toContain("continuing the conversation: 2 earlier turn(s), 6 message(s) sent again");
  });

  test("a retry of a follow-up sends the earlier turns again, and only its last attempt is kept for the next turn", async () => {
    let flaky = 0;
    fake.script("qwen2.5:7b", (body) => {
      const last = body.messages.at(-1);
      if (last?.content === "flaky" && flaky++ === 0) return { content: "overloaded", errorAfter: "server busy" };
      return { content: `answer to: ${last?.content}` };
    });
    const first = await run({ agent: "ollama", prompt: "remember x", workdir: workdir() });
    const second = await run({
      agent: "ollama",
      prompt: "flaky",
      session: first.id,
      retry: { maxAttempts: 2, outputPatterns: ["overloaded"], backoffS: 0 },
    });
    expect(second, second.error ?? "").toMatchObject({ status: "succeeded", attempt: 2 });
    const attempts = fake.chats.filter((c) => c.messages.at(-1)?.content === "flaky");
    expect(attempts.slice(-2).map((c) => c.messages.filter((m) => m.role === "user").map((m) => m.content))).toEqual([
      ["remember x", "flaky"],
      ["remember x", "flaky"],
    ]);
    await run({ agent: "ollama", prompt: "and?", session: second.id });
    expect(
      fake.chats
        .at(-1)
        ?.messages.filter((m) => m.role !== "system")
        .map((m) => `${m.role}: ${m.content}`),
    ).toEqual(["user: remember x", "assistant: answer to: remember x", "user: flaky", "assistant: answer to: flaky", "user: and?"]);
  });

  test("a job whose worker never reached the model has no conversation to continue (409)", async () => {
    const missing = await run({ agent: "ollama", prompt: "hi", model: "no-such-model", workdir: workdir() });
    expect(missing.status).toBe("failed");
    const res = await refused({ agent: "ollama", prompt: "go on", session: missing.id });
    expect(res.status).toBe(409);
    expect(res.body.field).toBe("session");
    expect(res.body.error).toMatch(/has no conversation to continue: its worker never reached the model \(failed\)/);
  });
});
