// The jobs repository and its list, the same cases against each dialect of the registry.
import { JobStatusSchema, type JobListQuery, type JobStatus } from "@corral/shared";
import { afterEach, describe, expect, test } from "vitest";
import { openPgDb } from "../pg/client.js";
import { postgresDialect } from "../dialects/postgres.js";
import { createJobsRepo } from "../repos/jobs.js";
import { SEARCH_COUNT_CAP } from "../registry.js";
import type { NewJobRow } from "../registry.js";
import { DIALECTS, type TestRegistry } from "./dialects.js";

const STATUSES = JobStatusSchema.options;
const AGENTS = ["alpha", "beta", "gamma"];

interface Stored {
  id: string;
  agent: string;
  status: JobStatus;
  prompt: string;
  error: string | null;
}

/** Text that means something to LIKE, to FTS5's query language or to SQL, to be found as plain text. */
const TRICKY = [
  "100% done",
  "rename snake_case_name",
  'say "hi" twice',
  "glob a*b here",
  "NEAR(x y) is a query",
  "pass -flag to it",
  "it's quoted",
  "(paren) first",
  "AND OR NOT words",
  "back\\slash path",
  "Mixed CASE Parser",
  "ümlaut Übersicht",
  "Грузовик ЖЁЛТЫЙ",
  "emoji 🚀 launch",
  "日本語のテキスト",
  "\u212Aelvin sign folds to ASCII",
];

/** What the list must answer: the jobs in the filter holding the text (case-insensitive), newest first. */
function expected(jobs: Stored[], query: Partial<JobListQuery>): Stored[] {
  const q = query.q?.toLowerCase();
  return jobs
    .filter((j) => !query.agent || j.agent === query.agent)
    .filter((j) => !query.status?.length || query.status.includes(j.status))
    .filter((j) => !q || [j.id, j.prompt, j.error ?? ""].some((t) => t.toLowerCase().includes(q)))
    .reverse();
}

describe.each(DIALECTS)("jobs in $dialect", ({ dialect, open }) => {
  let reg: TestRegistry;
  afterEach(async () => {
    await reg?.close();
  });

  async function registry(): Promise<TestRegistry> {
    reg = await open();
    for (const name of AGENTS) {
      await reg.run(
        `insert into agents (name, kind, provider, workdir, timeout_s, max_concurrent, env, enabled, builtin, created_at, updated_at)
         values (?, 'command', 'local', '/w', 60, 1, '{}', '1', '0', 0, 0)`,
        [name],
      );
    }
    return reg;
  }

  const base = (id: string, fields: Partial<NewJobRow> = {}): NewJobRow => ({
    id,
    agent: "alpha",
    status: "queued",
    prompt: "p",
    workdir: "/w",
    timeoutS: 60,
    origin: "rest",
    createdAt: 1,
    retry: null,
    ...fields,
  });

  let counter = 0;
  async function add(fields: Partial<Stored> & { agent: string; status: JobStatus; prompt: string }, createdAt = 1_000 + counter): Promise<Stored> {
    const id = `job${String(++counter).padStart(9, "0")}`;
    await reg.jobs.insert({ id, workdir: "/tmp/w", timeoutS: 60, origin: "rest", createdAt, error: null, ...fields });
    return { id, error: null, ...fields };
  }

  /** Deterministic jobs over three agents and every status, a few of them with tricky text. */
  async function fill(n: number): Promise<Stored[]> {
    const jobs: Stored[] = [];
    for (let i = 0; i < n; i++) {
      const status = STATUSES[(i * 7) % 11 < 8 ? (i * 7) % 11 : 2] as JobStatus;
      const prompt = i % 5 === 0 ? (TRICKY[(i / 5) % TRICKY.length] as string) : `task ${i}: refactor the module and test it`;
      jobs.push(await add({ agent: AGENTS[i % 3] as string, status, prompt, error: status === "failed" ? `exit code ${i % 4}: Boom_${i}` : null }));
    }
    return jobs;
  }

  /** Every page of the list, walked to the end. */
  async function walk(query: Partial<JobListQuery>, limit: number): Promise<{ ids: string[]; totals: number[] }> {
    const ids: string[] = [];
    const totals: number[] = [];
    for (let offset = 0; ; offset += limit) {
      const page = await reg.jobs.list({ limit, offset, ...query });
      expect(page.totalCapped).toBe(false);
      totals.push(page.total);
      ids.push(...page.rows.map((r) => r.id));
      if (page.rows.length < limit) return { ids, totals };
    }
  }

  async function check(jobs: Stored[], query: Partial<JobListQuery>, limit = 7): Promise<void> {
    const want = expected(jobs, query).map((j) => j.id);
    const got = await walk(query, limit);
    expect(got.ids, JSON.stringify(query)).toEqual(want);
    expect(new Set(got.totals), JSON.stringify(query)).toEqual(new Set([want.length]));
  }

  const ids = async (q: string, query: Partial<JobListQuery> = {}) =>
    (await reg.jobs.list({ q, limit: 10, offset: 0, ...query })).rows.map((r) => r.id);

  describe("the repository", () => {
    test("a job is stored and read back as it was given: JSON, nulls, large numbers, fractions", async () => {
      await registry();
      const invocation = { command: "c", args: ["x", 'ü "q"'], cwd: "/w", env: { A: "1" } };
      const row = await reg.jobs.insert(
        base("j1", {
          invocation,
          retry: { maxAttempts: 3, exitCodes: [75], outputPatterns: ["rate limit"], backoffS: 2 },
          pidStart: 2 ** 40 + 3,
          outputBytes: 3 * 2 ** 32,
          inputTokens: 2 ** 45,
          costUsd: 0.000123,
          maxCostUsd: 1.5,
          createdAt: 1_800_000_000_123,
        }),
      );
      expect(row).toMatchObject({ id: "j1", invocation, pidStart: 2 ** 40 + 3, outputBytes: 3 * 2 ** 32, inputTokens: 2 ** 45, costUsd: 0.000123 });
      expect(row.retry).toEqual({ maxAttempts: 3, exitCodes: [75], outputPatterns: ["rate limit"], backoffS: 2 });
      // SQLite's trigger numbers the job after the insert has returned its row (seq null there).
      const { seq: _seq, ...columns } = row;
      expect(await reg.jobs.get("j1")).toEqual({ ...columns, seq: 1 });
      expect(row).toMatchObject({
        model: null,
        pid: null,
        error: null,
        endedAt: null,
        conversationId: null,
        attempt: 1,
        createdAt: 1_800_000_000_123,
      });
      expect(await reg.jobs.get("missing")).toBeUndefined();
    });

    test("writes of different shapes each store exactly their own columns; an unknown job updates nothing", async () => {
      await registry();
      await reg.jobs.insert(base("j1"));
      await reg.jobs.update("j1", { status: "running", pid: 5, startedAt: 2 });
      await reg.jobs.update("j1", { status: "failed", error: "boom", endedAt: 3 });
      expect(await reg.jobs.get("j1")).toMatchObject({ status: "failed", pid: 5, startedAt: 2, error: "boom", endedAt: 3 });
      const updated = await reg.jobs.update("j1", { error: null, cancelledBy: undefined });
      expect(updated).toMatchObject({ status: "failed", pid: 5, error: null });
      expect(updated).toEqual(await reg.jobs.get("j1"));
      expect(await reg.jobs.update("missing", { status: "failed" })).toBeUndefined();
    });

    test("null in a JSON column is stored as NULL, by insert and by update, after a value of the same shape", async () => {
      await registry();
      await reg.jobs.insert(base("j2"));
      const isNull = async (column: string) =>
        (await reg.run<{ n: number }>(`select count(*) as n from jobs where id = 'j2' and ${column} is null`))[0]?.n;
      expect(await isNull("retry")).toBe(1);
      await reg.jobs.update("j2", { invocation: { command: "c", args: ["x"], cwd: "/w" } });
      expect((await reg.jobs.get("j2"))?.invocation).toEqual({ command: "c", args: ["x"], cwd: "/w" });
      expect(await isNull("invocation")).toBe(0);
      await reg.jobs.update("j2", { invocation: null });
      expect(await isNull("invocation")).toBe(1);
      expect((await reg.jobs.get("j2"))?.invocation).toBeNull();
    });

    test("seq numbers jobs in the order they were added", async () => {
      await registry();
      await reg.jobs.insert(base("a"));
      await reg.jobs.insert(base("b"));
      expect([(await reg.jobs.get("a"))?.seq, (await reg.jobs.get("b"))?.seq]).toEqual([1, 2]);
    });

    test("an attempt is stored once, and its end updates only that attempt", async () => {
      await registry();
      await reg.jobs.insert(base("j3"));
      await reg.jobs.startAttempt({ jobId: "j3", attempt: 1, status: "running", startedAt: 1, outputStart: 0 });
      await reg.jobs.startAttempt({ jobId: "j3", attempt: 1, status: "failed", startedAt: 9, outputStart: 9 });
      await reg.jobs.startAttempt({ jobId: "j3", attempt: 2, status: "running", startedAt: 5, outputStart: 3 * 2 ** 32 });
      await reg.jobs.endAttempt("j3", 1, { status: "failed", exitCode: 75, error: "quota", endedAt: 4, outputEnd: 10 });
      // An attempt's own usage: large counts, a fraction of a cent, and its source.
      const usage = {
        usageModel: "m",
        inputTokens: 3 * 2 ** 32,
        outputTokens: 7,
        cachedInputTokens: 0,
        costUsd: 0.0012345,
        costSource: "estimated" as const,
      };
      await reg.jobs.endAttempt("j3", 1, usage);
      await reg.jobs.endAttempt("j3", 9, { status: "failed" });
      const none = { usageModel: null, inputTokens: null, outputTokens: null, cachedInputTokens: null, costUsd: null, costSource: null };
      expect(await reg.jobs.attempts("j3")).toEqual([
        {
          jobId: "j3",
          attempt: 1,
          status: "failed",
          exitCode: 75,
          error: "quota",
          startedAt: 1,
          endedAt: 4,
          outputStart: 0,
          outputEnd: 10,
          ...usage,
        },
        {
          ...none,
          jobId: "j3",
          attempt: 2,
          status: "running",
          exitCode: null,
          error: null,
          startedAt: 5,
          endedAt: null,
          outputStart: 3 * 2 ** 32,
          outputEnd: null,
        },
      ]);
      expect(await reg.jobs.attempts("missing")).toEqual([]);
    });

    test("jobs by their worktree's state, oldest first", async () => {
      await registry();
      const wt = (state: "active" | "archived" | "merged" | "discarded") => ({
        repo: "/r",
        gitDir: "/r/.git",
        path: `/w/${state}`,
        branch: "corral/x",
        base: "main",
        baseCommit: "0".repeat(40),
        state,
      });
      await reg.jobs.insert(base("none"));
      await reg.jobs.insert(base("a1", { worktree: wt("active") }));
      await reg.jobs.insert(base("m1", { worktree: wt("merged") }));
      await reg.jobs.insert(base("a2", { worktree: wt("active") }));
      expect((await reg.jobs.withWorktree("active")).map((j) => j.id)).toEqual(["a1", "a2"]);
      expect((await reg.jobs.withWorktree("merged")).map((j) => j.worktree?.state)).toEqual(["merged"]);
      expect(await reg.jobs.withWorktree("archived")).toEqual([]);
    });

    test("a busy workdir answers its oldest queued job, else its oldest running one", async () => {
      await registry();
      for (let i = 0; i < 5; i++) await reg.jobs.insert(base(`q${i}`));
      await reg.jobs.insert(base("run1", { status: "running", workdir: "/busy" }));
      await reg.jobs.insert(base("run2", { status: "running", workdir: "/busy" }));
      await reg.jobs.insert(base("done", { status: "succeeded", workdir: "/done" }));
      expect((await reg.jobs.activeInWorkdir("/busy"))?.id).toBe("run1");
      await reg.jobs.insert(base("queued", { workdir: "/busy" }));
      expect((await reg.jobs.activeInWorkdir("/busy"))?.id).toBe("queued");
      expect((await reg.jobs.activeInWorkdir("/w"))?.id).toBe("q0");
      expect(await reg.jobs.activeInWorkdir("/done")).toBeUndefined();
      expect(await reg.jobs.activeInWorkdir("/idle")).toBeUndefined();
      if (dialect === "SQLite") {
        const plan = await reg.run<{ detail: string }>(
          "EXPLAIN QUERY PLAN SELECT id FROM jobs WHERE workdir = ? AND status IN ('queued', 'running') LIMIT 1",
          ["/busy"],
        );
        expect(plan.map((row) => row.detail).join("\n")).toMatch(/USING (COVERING )?INDEX jobs_workdir_status_idx/);
      }
    });

    test("a conversation's thread is its newest jobs, oldest first; a group is its jobs in launch order", async () => {
      await registry();
      for (let i = 0; i < 6; i++) await reg.jobs.insert(base(`c${i}`, { conversationId: "c0", groupId: i % 2 ? "g" : null, createdAt: 100 - i }));
      await reg.jobs.insert(base("other", { conversationId: "x", groupId: "h" }));
      expect((await reg.jobs.thread("c0", 4)).map((r) => r.id)).toEqual(["c2", "c3", "c4", "c5"]);
      expect((await reg.jobs.thread("c0", 100)).map((r) => r.id)).toEqual(["c0", "c1", "c2", "c3", "c4", "c5"]);
      expect(await reg.jobs.thread("c0", 0)).toEqual([]);
      expect((await reg.jobs.thread("c0", 1)).map((r) => r.id)).toEqual(["c5"]);
      expect(await reg.jobs.thread("none", 5)).toEqual([]);
      expect((await reg.jobs.group("g")).map((r) => r.id)).toEqual(["c1", "c3", "c5"]);
      expect(await reg.jobs.group("none")).toEqual([]);
    });

    test("a job's relaunches are the newest jobs relaunched from it, oldest first", async () => {
      await registry();
      await reg.jobs.insert(base("orig"));
      for (let i = 0; i < 4; i++) await reg.jobs.insert(base(`r${i}`, { relaunchOf: i === 2 ? "other" : "orig" }));
      expect((await reg.jobs.relaunches("orig", 10)).map((r) => r.id)).toEqual(["r0", "r1", "r3"]);
      expect((await reg.jobs.relaunches("orig", 2)).map((r) => r.id)).toEqual(["r1", "r3"]);
      expect((await reg.jobs.get("r3"))?.relaunchOf).toBe("orig");
      expect(await reg.jobs.relaunches("r0", 10)).toEqual([]);
    });

    test("whether an agent has jobs, and the jobs in some statuses by creation time", async () => {
      await registry();
      await reg.jobs.insert(base("late", { status: "running", createdAt: 50 }));
      await reg.jobs.insert(base("early", { status: "queued", createdAt: 10, agent: "beta" }));
      await reg.jobs.insert(base("tie", { status: "queued", createdAt: 50 }));
      await reg.jobs.insert(base("tie2", { status: "queued", createdAt: 50 }));
      await reg.jobs.insert(base("done", { status: "succeeded", createdAt: 1 }));
      expect(await reg.jobs.hasJobs("alpha")).toBe(true);
      expect(await reg.jobs.hasJobs("gamma")).toBe(false);
      // Ties as SQLite reads them: one status after the other (its index), each in the order added.
      expect((await reg.jobs.withStatus(["running", "queued"])).map((r) => r.id)).toEqual(["early", "tie", "tie2", "late"]);
      expect((await reg.jobs.withStatus(["lost"])).map((r) => r.id)).toEqual([]);
      expect(await reg.jobs.withStatus([])).toEqual([]);
    });
  });

  describe("the jobs list", () => {
    test("every agent and status filter, alone and together, pages through the right jobs, newest first, with the right total", async () => {
      await registry();
      const jobs = await fill(400);
      const statusSets: JobStatus[][] = [[], ...STATUSES.map((s) => [s]), ["failed", "timed_out"], ["succeeded", "lost", "queued"], [...STATUSES]];
      for (const agent of [undefined, ...AGENTS, "nobody"]) for (const status of statusSets) await check(jobs, { agent, status }, 13);
    });

    test("paging edges: a page of one, the last page, past the end, a repeated status", async () => {
      await registry();
      const jobs = await fill(30);
      const newest = [...jobs].reverse().map((j) => j.id);
      expect(await reg.jobs.list({ limit: 1, offset: 0 })).toMatchObject({ total: 30, totalCapped: false });
      expect((await reg.jobs.list({ limit: 1, offset: 29 })).rows.map((r) => r.id)).toEqual([newest[29]]);
      expect(await reg.jobs.list({ limit: 10, offset: 30 })).toEqual({ rows: [], total: 30, totalCapped: false });
      expect(await reg.jobs.list({ limit: 10, offset: 10_000_000 })).toEqual({ rows: [], total: 30, totalCapped: false });
      expect(await reg.jobs.list({ limit: 0, offset: 0 })).toEqual({ rows: [], total: 30, totalCapped: false });
      expect(await reg.jobs.list({ q: "task", limit: 0, offset: 0 })).toMatchObject({ rows: [], totalCapped: false });
      expect(await reg.jobs.list({ q: "task", limit: 5, offset: 1_000 })).toEqual({ rows: [], total: 24, totalCapped: false });
      const twice = await reg.jobs.list({ status: ["failed", "failed"], limit: 50, offset: 0 });
      expect(twice.rows.map((r) => r.id)).toEqual(expected(jobs, { status: ["failed"] }).map((j) => j.id));
      const rows = (await reg.jobs.list({ limit: 3, offset: 0 })).rows;
      expect(rows).toEqual(await Promise.all(newest.slice(0, 3).map((id) => reg.jobs.get(id))));
    });

    test("newest first means the order jobs were added, whatever their clock said", async () => {
      await registry();
      const later = await add({ agent: "alpha", status: "succeeded", prompt: "added first, clock ahead" }, 9_000);
      const earlier = await add({ agent: "alpha", status: "succeeded", prompt: "added second, clock behind" }, 1_000);
      expect((await reg.jobs.list({ limit: 10, offset: 0 })).rows.map((r) => r.id)).toEqual([earlier.id, later.id]);
    });

    test("text is found anywhere in the id, prompt or error, case-insensitive, with LIKE and query syntax taken literally, short terms too", async () => {
      await registry();
      const jobs = await fill(400);
      const terms = [
        ...["100%", "%", "_", "e_n", "snake_case", '"hi"', '"', "a*b", "*", "NEAR(x", "NEAR", "-flag", "-", "it's", "'", "(paren)", "(", ")"],
        ...["AND OR", "NOT", "back\\slash", "\\", "pArSeR", "x", "xy", "refactor", "actor the", "boom_3", "BOOM", "zzzz"],
        ...["e", "E", ":", "t", "re", "it", "t it", "\u0001", "it\u0001", "%_", "\\%", "'; drop table jobs; --"],
        ...["ГРУЗОВИК", "жёлтый", "ж", "Ж", "🚀", "🚀 l", "日本", "の", "テキスト", "kelvin", "KELVIN sign"],
        ...[jobs[41]!.id, jobs[41]!.id.slice(4, 10), "task 1".repeat(80), `${"x".repeat(499)}`],
      ];
      for (const q of terms) await check(jobs, { q }, 50);
      // Combined with filters.
      for (const q of ["refactor", "boom", "e_n", "x"]) {
        for (const query of [
          { status: ["failed" as const] },
          { agent: "beta" },
          { agent: "gamma", status: ["succeeded" as const, "lost" as const] },
        ]) {
          await check(jobs, { q, ...query }, 9);
        }
      }
    });

    test("non-ASCII letters fold case too, at any length", async () => {
      await registry();
      const job = await add({ agent: "alpha", status: "succeeded", prompt: "ümlaut Übersicht" });
      await add({ agent: "alpha", status: "succeeded", prompt: "plain ascii" });
      for (const q of ["übersicht", "ÜMLAUT", "Üb", "üb", "ü", "Ü", "t Ü"]) expect(await ids(q), q).toEqual([job.id]);
      // A letter outside ASCII whose lower case is an ASCII one (the Kelvin sign's is k).
      const kelvin = await add({ agent: "alpha", status: "succeeded", prompt: "\u212Aelvin" });
      for (const q of ["kelvin", "KELVIN", "elvin"]) expect(await ids(q), q).toEqual([kelvin.id]);
    });

    test("one or two characters in few jobs, even at the very end of an id, prompt or error, are found", async () => {
      await registry();
      const jobs: Stored[] = [];
      for (let i = 0; i < 20; i++) jobs.push(await add({ agent: "alpha", status: "succeeded", prompt: "plain work" }));
      jobs.push(await add({ agent: "beta", status: "failed", prompt: "ends in zq", error: "exit 1: kx" }));
      jobs.push(await add({ agent: "beta", status: "succeeded", prompt: "Q" }));
      const last = jobs[jobs.length - 1]!;
      for (const q of ["zq", "q", "Q", "kx", "x", ": ", last.id.slice(-2), last.id.slice(-1)]) await check(jobs, { q }, 5);
      await check(jobs, { q: "q", agent: "beta" }, 5);
    });

    test("a job is found by the text it has now: a new error, an edited prompt, and not after it is deleted", async () => {
      await registry();
      const job = await add({ agent: "alpha", status: "running", prompt: "compile the kernel" });
      expect(await ids("kernel")).toEqual([job.id]);
      await reg.jobs.update(job.id, { status: "failed", endedAt: 5_000, error: "exit code 2: linker exploded" });
      expect(await ids("linker")).toEqual([job.id]);
      expect(await ids("kernel")).toEqual([job.id]);
      await reg.jobs.update(job.id, { status: "queued", error: null });
      expect(await ids("linker")).toEqual([]);
      await reg.jobs.update(job.id, { prompt: "compile the bootloader" });
      expect(await ids("kernel")).toEqual([]);
      expect(await ids("bootloader")).toEqual([job.id]);
      await reg.jobs.update(job.id, { status: "succeeded", outputBytes: 10, exitCode: 0 });
      expect(await ids("bootloader")).toEqual([job.id]);
      await reg.run("delete from jobs where id = ?", [job.id]);
      expect(await ids("bootloader")).toEqual([]);
      expect((await reg.jobs.list({ limit: 10, offset: 0 })).total).toBe(0);
      // SQLite's text index is kept by triggers: it still matches the jobs table row for row.
      if (dialect === "SQLite") await reg.run("insert into jobs_search (jobs_search) values ('integrity-check')");
    });

    test("a text search counts up to 1,000 matches past the page and says when it stopped", async () => {
      await registry();
      for (let i = 0; i < SEARCH_COUNT_CAP + 60; i++) await add({ agent: i % 2 ? "alpha" : "beta", status: "succeeded", prompt: `common task ${i}` });
      for (const q of ["common", "co", "c"]) {
        const first = await reg.jobs.list({ q, limit: 50, offset: 0 });
        expect(first).toMatchObject({ total: SEARCH_COUNT_CAP, totalCapped: true });
        expect(first.rows).toHaveLength(50);
        const deep = await reg.jobs.list({ q, limit: 50, offset: 500 });
        expect(deep).toMatchObject({ total: SEARCH_COUNT_CAP + 60, totalCapped: false });
        const filtered = await reg.jobs.list({ q, agent: "alpha", limit: 50, offset: 0 });
        expect(filtered).toMatchObject({ total: (SEARCH_COUNT_CAP + 60) / 2, totalCapped: false });
      }
      expect(await reg.jobs.list({ limit: 50, offset: 0 })).toMatchObject({ total: SEARCH_COUNT_CAP + 60, totalCapped: false });
    });

    test("past a thousand jobs in the filter, common, rare and short text are each found, paged and counted", async () => {
      await registry();
      const jobs = await fill(2_500);
      for (const q of [
        "refactor",
        "task 12",
        "boom_3",
        "Boom_1",
        "snake_case",
        "zzzz",
        "ümlaut",
        "🚀",
        "ж",
        "q",
        "xy",
        "%",
        "0: B",
        jobs[2_000]!.id,
      ]) {
        const want = expected(jobs, { q }).map((j) => j.id);
        const first = await reg.jobs.list({ q, limit: 50, offset: 0 });
        expect(
          first.rows.map((r) => r.id),
          q,
        ).toEqual(want.slice(0, 50));
        expect([first.total, first.totalCapped], q).toEqual([Math.min(want.length, SEARCH_COUNT_CAP), want.length > SEARCH_COUNT_CAP]);
        const deep = await reg.jobs.list({ q, limit: 20, offset: 1_200 });
        expect(
          deep.rows.map((r) => r.id),
          q,
        ).toEqual(want.slice(1_200, 1_220));
        expect([deep.total, deep.totalCapped], q).toEqual([Math.min(want.length, 1_200 + SEARCH_COUNT_CAP), want.length > 1_200 + SEARCH_COUNT_CAP]);
        for (const query of [
          { status: ["failed" as const] },
          { agent: "beta" },
          { agent: "gamma", status: ["succeeded" as const, "queued" as const] },
        ]) {
          await check(jobs, { q, ...query }, 100);
        }
      }
    });
  });
});

describe.runIf(DIALECTS.some((d) => d.dialect === "PostgreSQL"))("jobs in PostgreSQL, added from several connections at once", () => {
  test("every snapshot of the list holds jobs 1…n: no job commits after a higher-numbered one", async () => {
    const reg = await DIALECTS.find((d) => d.dialect === "PostgreSQL")!.open();
    const writers = await Promise.all(Array.from({ length: 6 }, () => openPgDb(reg.url!, { max: 1 })));
    try {
      await reg.run(`insert into agents (name, kind, provider, workdir, timeout_s, max_concurrent, env, enabled, builtin, created_at, updated_at)
        values ('alpha', 'command', 'local', '/w', 60, 1, '{}', '1', '0', 0, 0)`);
      let writing = true;
      const gaps: number[][] = [];
      const reader = (async () => {
        while (writing) {
          const seqs = (await reg.jobs.list({ limit: 500, offset: 0 })).rows.map((r) => r.seq ?? 0);
          if (seqs.length && seqs[0] !== seqs.length) gaps.push(seqs);
        }
      })();
      await Promise.all(
        writers.map(async (w, k) => {
          for (let i = 0; i < 25; i++) {
            // In a transaction that lasts a moment after its insert, as the registry's own do.
            await w.db.transaction(async (tx) => {
              await createJobsRepo(postgresDialect(tx)).insert({
                id: `w${k}-${i}`,
                agent: "alpha",
                status: "queued",
                prompt: "p",
                workdir: "/w",
                timeoutS: 60,
                origin: "rest",
                createdAt: 1,
              });
              await new Promise((r) => setTimeout(r, (i * 7 + k * 3) % 5));
            });
          }
        }),
      );
      writing = false;
      await reader;
      expect(gaps).toEqual([]);
      expect((await reg.jobs.list({ limit: 500, offset: 0 })).total).toBe(150);
    } finally {
      await Promise.all(writers.map((w) => w.close()));
      await reg.close();
    }
  });
});
