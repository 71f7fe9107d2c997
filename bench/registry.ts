// The jobs list at 100,000 jobs: every filter the panel's History and `corral_jobs` offer (agent,
// each status, several statuses, text, pages deep into the list), each answer with its total,
// against GET /api/health on the same server. Then what a job's writes cost (insert and three
// updates, through the triggers and indexes the list needs) in a full registry against an empty one.
// On PostgreSQL also which runner holds a browsed path, asked at every Files-page request.
import path from "node:path";
import Database from "better-sqlite3";
import { openPgDb } from "../apps/server/src/db/pg/client.js";
import { createPgRegistry } from "../apps/server/src/db/pg/registry.js";
import { postgresDialect } from "../apps/server/src/db/dialects/postgres.js";
import type { JobsRepo } from "../apps/server/src/db/registry.js";
import { createJobsRepo } from "../apps/server/src/db/repos/jobs.js";
import { RunnerWorkdirs } from "../apps/server/src/workdirs/on-runners.js";
import { startPrivatePostgres } from "../apps/server/test/private-postgres.js";
import { JobListQuerySchema } from "../packages/shared/src/index.js";
import { RARE_JOBS, RARE_WORD, SEED_AGENTS, seedJobs, seedPgJobs } from "./lib/job-seed.js";
import { startCorral } from "./lib/server.js";
import { percentile, type Benchmark, type BenchRow } from "./lib/stats.js";

const JOBS = 100_000;
const CALLS = 100;
const WARMUP = 10;
const WRITES = 2_000;
const LIST_TARGET = { bound: "max", value: 20, rule: "issue 13: ≤ 20 ms at 100,000 jobs" } as const;
/** Agents whose jobs the PostgreSQL seed gives a runner (22 % of jobs, 80 of the 240 workdirs); the rest ran on the server, `local`. */
const ON_RUNNER = new Set(["codex", "kiro"]);
const BENCH_RUNNER = "bench-runner-1";
const STATUSES = ["queued", "running", "succeeded", "failed", "cancelled", "timed_out", "budget_exceeded", "lost"];

/** Every filter of the list, as `GET /api/jobs` takes it (after `limit=50&`). */
const QUERIES: [string, string][] = [
  ["first page (50 newest)", ""],
  ...STATUSES.map((s): [string, string] => [`status ${s}`, `status=${s}`]),
  ["statuses failed + timed_out", "status=failed,timed_out"],
  ["agent", "agent=kiro"],
  ["agent + status", "agent=kiro&status=failed"],
  ["text, a common word (about 60 % of jobs)", "q=test"],
  [`text, a rare word (${RARE_JOBS} jobs)`, `q=${RARE_WORD}`],
  ["text, inside a word", "q=actor"],
  ["text, a phrase", "q=timed%20out%20after"],
  ["text, no match", "q=qqxyzzy"],
  ["text, 2 characters", "q=ti"],
  ["text, 2 characters in 1.5 % of jobs", "q=js"],
  ["text, 2 characters, no match", "q=zq"],
  ["text, 1 character", "q=e"],
  ["text, 1 character in 3 % of jobs", "q=%24"],
  ["text, 1 character, no match", `q=${encodeURIComponent("ж")}`],
  ["text + agent", "q=test&agent=kiro"],
  ["text + status", "q=test&status=failed"],
  ["text + a status with few jobs", "q=test&status=running"],
  ["page 100 (offset 4,950)", "offset=4950"],
  ["last page (offset 99,950)", "offset=99950"],
  ["status, page 100", "status=succeeded&offset=4950"],
  ["text, page 100", "q=test&offset=4950"],
];

/**
 * A job's life in the registry as the server writes it, each statement its own transaction: the
 * launch, the start, the usage, the end. Returns the milliseconds each job took.
 */
function jobWrites(file: string, count: number, tag: string): number[] {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("busy_timeout = 5000");
  const insert = db.prepare(
    `insert into jobs (id, agent, status, prompt, workdir, model, timeout_s, origin, provider, created_at)
     values (?, 'gemini', 'queued', ?, '/home/dev/projects/gemini-1', 'gemini-model-1', 1800, 'mcp', 'gemini', ?)`,
  );
  const start = db.prepare("update jobs set status = 'running', started_at = ?, pid = ?, invocation = ? where id = ?");
  const usage = db.prepare("update jobs set input_tokens = ?, output_tokens = ?, cost_usd = ?, output_bytes = ? where id = ?");
  const end = db.prepare("update jobs set status = ?, ended_at = ?, exit_code = ?, error = ?, final_text = ? where id = ?");
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const id = `w${tag}${String(i).padStart(8, "0")}`;
    const t0 = performance.now();
    insert.run(id, `Refactor the session handler in src/app.ts and add tests (write-cost job ${i}).`, Date.now());
    start.run(Date.now(), 4242, JSON.stringify({ command: "gemini", args: ["-p", "…"], cwd: "/home/dev" }), id);
    usage.run(1200, 300, 0.002, 4096, id);
    const failed = i % 8 === 0;
    end.run(failed ? "failed" : "succeeded", Date.now(), failed ? 1 : 0, failed ? "exit code 1: TypeError" : null, failed ? null : "Done.", id);
    samples.push(performance.now() - t0);
  }
  db.close();
  return samples;
}

export const registry: Benchmark = {
  name: "registry",
  async run() {
    const server = await startCorral();
    try {
      const file = path.join(server.root, "data", "corral.db");
      const writesEmpty = jobWrites(file, WRITES, "a");
      const seeded = performance.now();
      seedJobs(file, { jobs: JOBS });
      const seedS = (performance.now() - seeded) / 1000;
      const writesFull = jobWrites(file, WRITES, "b");

      const headers = { authorization: `Bearer ${server.token}` };
      const time = async (url: string) => {
        const samples: number[] = [];
        for (let i = 0; i < CALLS + WARMUP; i++) {
          const t0 = performance.now();
          const res = await fetch(`${server.url}${url}`, { headers });
          await res.text();
          if (!res.ok) throw new Error(`${url} answered ${res.status}`);
          if (i >= WARMUP) samples.push(performance.now() - t0);
        }
        return samples;
      };
      const health = percentile(await time("/api/health"), 50);
      const rows: BenchRow[] = [];
      for (const [label, query] of QUERIES) {
        const corral = percentile(await time(`/api/jobs?limit=50${query ? `&${query}` : ""}`), 50);
        rows.push({ metric: `${label} p50`, corral, baseline: health, unit: "ms", target: LIST_TARGET });
      }
      rows.push({
        metric: "a job's writes (insert + 3 updates) at 100,000 jobs p50",
        corral: percentile(writesFull, 50),
        baseline: percentile(writesEmpty, 50),
        unit: "ms",
      });
      return {
        title: `Jobs list with ${JOBS.toLocaleString("en")} jobs in the registry`,
        baseline: "`GET /api/health` on the same server; for the last row, the same writes in the empty registry.",
        rows,
        notes: [
          `${CALLS} sequential \`GET /api/jobs?limit=50&…\` per row after ${WARMUP} warm-up requests; each answer carries its total (a text search counts up to 1,000 matches past the page).`,
          `Seeded in ${seedS.toFixed(1)} s: ${JOBS.toLocaleString("en")} jobs over six agents and every status, prompts of one to sixty sentences, errors and summaries, written in one transaction through the text index's triggers.`,
          `A job's writes: ${WRITES.toLocaleString("en")} jobs, each insert and update its own transaction as the server writes them, in the empty registry (baseline) and after the seed: what the list's indexes and text index add to every job as the registry grows.`,
        ],
      };
    } finally {
      await server.stop();
    }
  },
};

/** What a job's writes cost through the PostgreSQL repository: the same launch, start, usage and end. */
async function pgJobWrites(jobs: JobsRepo, count: number, tag: string): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const id = `w${tag}${String(i).padStart(8, "0")}`;
    const t0 = performance.now();
    await jobs.insert({
      id,
      agent: "gemini",
      status: "queued",
      prompt: `Refactor the session handler in src/app.ts and add tests (write-cost job ${i}).`,
      workdir: "/home/dev/projects/gemini-1",
      model: "gemini-model-1",
      timeoutS: 1800,
      origin: "mcp",
      provider: "gemini",
      createdAt: Date.now(),
    });
    await jobs.update(id, {
      status: "running",
      startedAt: Date.now(),
      pid: 4242,
      invocation: { command: "gemini", args: ["-p", "…"], cwd: "/home/dev" },
    });
    await jobs.update(id, { inputTokens: 1200, outputTokens: 300, costUsd: 0.002, outputBytes: 4096 });
    const failed = i % 8 === 0;
    await jobs.update(id, {
      status: failed ? "failed" : "succeeded",
      endedAt: Date.now(),
      exitCode: failed ? 1 : 0,
      error: failed ? "exit code 1: TypeError" : null,
      finalText: failed ? null : "Done.",
    });
    samples.push(performance.now() - t0);
  }
  return samples;
}

export const registryPg: Benchmark = {
  name: "registry-pg",
  async run() {
    const postgres = await startPrivatePostgres();
    if ("missing" in postgres) throw new Error(postgres.missing);
    const handle = await openPgDb(postgres.url);
    const { db, close } = handle;
    try {
      const now = Date.now();
      for (const name of SEED_AGENTS) {
        await db.$client.query(
          `insert into agents (name, kind, provider, workdir, timeout_s, max_concurrent, env, enabled, builtin, created_at, updated_at)
           values ($1, 'command', $1, '/home/dev', 1800, 4, '{}', true, false, $2, $2)`,
          [name, now],
        );
      }
      const jobs = createJobsRepo(postgresDialect(db));
      const writesEmpty = await pgJobWrites(jobs, WRITES / 4, "a");
      const seeded = performance.now();
      const registry = createPgRegistry(handle);
      await registry.runners.register({
        id: BENCH_RUNNER,
        name: "gpu-box",
        labels: ["gpu"],
        hostname: "gpu-box",
        version: "0",
        startedAt: now,
        heartbeatAt: now,
        stoppedAt: null,
      });
      await seedPgJobs(db.$client, { jobs: JOBS }, (job) => (!ON_RUNNER.has(job.agent) ? "local" : job.status === "queued" ? null : BENCH_RUNNER));
      // What autovacuum leaves in a registry that has stood a while: statistics, and every page
      // marked all-visible (the counts read indexes alone). A plain vacuum right after the seed marks
      // only part of them.
      await db.$client.query("vacuum (freeze, analyze) jobs");
      const seedS = (performance.now() - seeded) / 1000;
      const writesFull = await pgJobWrites(jobs, WRITES / 4, "b");

      const time = async (call: () => Promise<unknown>) => {
        const samples: number[] = [];
        for (let i = 0; i < CALLS + WARMUP; i++) {
          const t0 = performance.now();
          await call();
          if (i >= WARMUP) samples.push(performance.now() - t0);
        }
        return samples;
      };
      const roundTrip = percentile(await time(() => db.$client.query("select 1")), 50);
      const rows: BenchRow[] = [];
      for (const [label, query] of QUERIES) {
        const parsed = JobListQuerySchema.parse(Object.fromEntries(new URLSearchParams(`limit=50${query ? `&${query}` : ""}`)));
        const corral = percentile(await time(() => jobs.list(parsed)), 50);
        rows.push({ metric: `${label} p50`, corral, baseline: roundTrip, unit: "ms", target: LIST_TARGET });
      }
      rows.push({
        metric: "a job's writes (insert + 3 updates) at 100,000 jobs p50",
        corral: percentile(writesFull, 50),
        baseline: percentile(writesEmpty, 50),
        unit: "ms",
      });

      // Which runner holds a browsed path: every Files-page request and /api/workdirs/* ask it first.
      const onRunners = new RunnerWorkdirs(registry, { homeDir: "/home/dev", leaseMs: 15_000, answerTimeoutMs: 10_000 });
      const held = async (browsed: string, expected: string | null) => {
        const found = await onRunners.holding(browsed);
        if ((found?.path ?? null) !== expected) throw new Error(`holding(${browsed}) answered ${found?.path ?? null}, not ${expected}`);
      };
      const workdirs = await onRunners.list();
      if (workdirs.length !== 80) throw new Error(`${workdirs.length} workdirs on the runner, not 80`);
      const everyWorkdir = percentile(await time(() => onRunners.list()), 50);
      const browseTarget = { bound: "max", value: everyWorkdir / 10, rule: "issue 17: a tenth of grouping every job" } as const;
      rows.push({
        metric: "a browsed path's runner (`holding`), in a runner's workdir (361 jobs) p50",
        corral: percentile(await time(() => held("/home/dev/projects/codex-7/src/app.ts", "/home/dev/projects/codex-7")), 50),
        baseline: roundTrip,
        unit: "ms",
        target: browseTarget,
      });
      rows.push({
        metric: "same, in a workdir of the server's (848 jobs) p50",
        corral: percentile(await time(() => held("/home/dev/projects/gemini-3/src/app.ts", null)), 50),
        baseline: roundTrip,
        unit: "ms",
        target: browseTarget,
      });
      rows.push({
        metric: "every workdir's runner (`list`, for `GET /api/workdirs`; what `holding` read before) p50",
        corral: everyWorkdir,
        baseline: roundTrip,
        unit: "ms",
      });
      return {
        title: `Jobs list with ${JOBS.toLocaleString("en")} jobs in a PostgreSQL registry`,
        baseline: "`select 1` on the same pool; for the last row, the same writes in the empty registry.",
        rows,
        notes: [
          `The PostgreSQL jobs repository called in-process (the server does not run on PostgreSQL yet): ${CALLS} sequential \`list({ limit: 50, … })\` per row after ${WARMUP} warm-up calls, the same filters as the SQLite table, each answer with its total.`,
          `A private PostgreSQL 15 (the test run's: fsync off), seeded in ${seedS.toFixed(1)} s with the same ${JOBS.toLocaleString("en")} jobs as the SQLite table through both text indexes, then \`vacuum (freeze, analyze)\`.`,
          `A job's writes: ${(WRITES / 4).toLocaleString("en")} jobs through the repository (insert under its ordering lock, three updates), each its own transaction.`,
          "Browsing: the seeded jobs of two agents (22 %, 80 of the 240 workdirs) ran on a runner, the rest on the server (`local`); `RunnerWorkdirs.holding()` of a file in a workdir reads the jobs of the path and the directories above it, `list()` groups every job by workdir and runner.",
        ],
      };
    } finally {
      await close();
      await postgres.stop();
    }
  },
};
