import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { JobStatusSchema, type JobListQuery, type JobStatus } from "@corral/shared";
import { sql } from "drizzle-orm";
import { afterEach, describe, expect, test } from "vitest";
import { openDb, type DbHandle } from "../client.js";
import { SEARCH_COUNT_CAP } from "./job-list.js";
import { createJobsRepo, type JobsRepo } from "./jobs.js";

const STATUSES = JobStatusSchema.options;
const AGENTS = ["alpha", "beta", "gamma"];

let handle: DbHandle | null = null;
let dir = "";
afterEach(() => {
  handle?.close();
  handle = null;
  rmSync(dir, { recursive: true, force: true });
});

function registry(): { repo: JobsRepo; handle: DbHandle } {
  dir = mkdtempSync(path.join(os.tmpdir(), "corral-job-list-"));
  handle = openDb(path.join(dir, "corral.db"));
  for (const name of AGENTS) {
    handle.db.run(sql`insert into agents (name, kind, provider, workdir, timeout_s, max_concurrent, env, enabled, builtin, created_at, updated_at)
      values (${name}, 'command', 'local', '/tmp', 60, 1, '{}', 1, 0, 0, 0)`);
  }
  return { repo: createJobsRepo(handle.db), handle };
}

interface Stored {
  id: string;
  agent: string;
  status: JobStatus;
  prompt: string;
  error: string | null;
}

/** Text that means something to LIKE or to the FTS5 query language, to be found as plain text. */
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
];

let counter = 0;
function add(repo: JobsRepo, fields: Partial<Stored> & { agent: string; status: JobStatus; prompt: string }, createdAt = 1_000 + counter): Stored {
  const id = `job${String(++counter).padStart(9, "0")}`;
  repo.insert({ id, workdir: "/tmp/w", timeoutS: 60, origin: "rest", createdAt, error: null, ...fields });
  return { id, error: null, ...fields };
}

/** Deterministic jobs over three agents and every status, a few of them with tricky text. */
function fill(repo: JobsRepo, n: number): Stored[] {
  const jobs: Stored[] = [];
  for (let i = 0; i < n; i++) {
    const status = STATUSES[(i * 7) % 11 < 8 ? (i * 7) % 11 : 2] as JobStatus;
    const prompt = i % 5 === 0 ? (TRICKY[(i / 5) % TRICKY.length] as string) : `task ${i}: refactor the module and test it`;
    jobs.push(add(repo, { agent: AGENTS[i % 3] as string, status, prompt, error: status === "failed" ? `exit code ${i % 4}: Boom_${i}` : null }));
  }
  return jobs;
}

/** What the list must answer: the jobs in the filter holding the text (case-insensitive), newest first. */
function expected(jobs: Stored[], query: Partial<JobListQuery>): Stored[] {
  const q = query.q?.toLowerCase();
  return jobs
    .filter((j) => !query.agent || j.agent === query.agent)
    .filter((j) => !query.status?.length || query.status.includes(j.status))
    .filter((j) => !q || [j.id, j.prompt, j.error ?? ""].some((t) => t.toLowerCase().includes(q)))
    .reverse();
}

/** Every page of the list, walked to the end. */
function walk(repo: JobsRepo, query: Partial<JobListQuery>, limit: number): { ids: string[]; totals: number[] } {
  const ids: string[] = [];
  const totals: number[] = [];
  for (let offset = 0; ; offset += limit) {
    const page = repo.list({ limit, offset, ...query });
    expect(page.totalCapped).toBe(false);
    totals.push(page.total);
    ids.push(...page.rows.map((r) => r.id));
    if (page.rows.length < limit) return { ids, totals };
  }
}

function check(repo: JobsRepo, jobs: Stored[], query: Partial<JobListQuery>, limit = 7): void {
  const want = expected(jobs, query).map((j) => j.id);
  const got = walk(repo, query, limit);
  expect(got.ids, JSON.stringify(query)).toEqual(want);
  expect(new Set(got.totals), JSON.stringify(query)).toEqual(new Set([want.length]));
}

describe("the jobs list", () => {
  test("every agent and status filter, alone and together, pages through the right jobs, newest first, with the right total", () => {
    const { repo } = registry();
    const jobs = fill(repo, 400);
    const statusSets: JobStatus[][] = [[], ...STATUSES.map((s) => [s]), ["failed", "timed_out"], ["succeeded", "lost", "queued"], [...STATUSES]];
    for (const agent of [undefined, ...AGENTS]) for (const status of statusSets) check(repo, jobs, { agent, status }, 13);
  });

  test("newest first means the order jobs were added, whatever their clock said", () => {
    const { repo } = registry();
    const later = add(repo, { agent: "alpha", status: "succeeded", prompt: "added first, clock ahead" }, 9_000);
    const earlier = add(repo, { agent: "alpha", status: "succeeded", prompt: "added second, clock behind" }, 1_000);
    expect(repo.list({ limit: 10, offset: 0 }).rows.map((r) => r.id)).toEqual([earlier.id, later.id]);
  });

  test("text is found anywhere in the id, prompt or error, case-insensitive, with LIKE and FTS5 syntax taken literally, short terms too", () => {
    const { repo } = registry();
    const jobs = fill(repo, 400);
    const terms = [
      ...["100%", "%", "_", "e_n", "snake_case", '"hi"', '"', "a*b", "*", "NEAR(x", "NEAR", "-flag", "-", "it's", "'", "(paren)", "(", ")"],
      ...["AND OR", "NOT", "back\\slash", "\\", "pArSeR", "x", "xy", "refactor", "actor the", "boom_3", "BOOM", "zzzz"],
      ...["e", "E", ":", "t", "re", "it", "t it", "\u0001", "it\u0001"],
      ...[jobs[41]!.id, jobs[41]!.id.slice(4, 10)],
    ];
    for (const q of terms) check(repo, jobs, { q }, 50);
    // Combined with filters: both the few-jobs path (a status with under 100 jobs) and the walk over the matches.
    for (const q of ["refactor", "boom", "e_n", "x"]) {
      for (const query of [{ status: ["failed" as const] }, { agent: "beta" }, { agent: "gamma", status: ["succeeded" as const, "lost" as const] }]) {
        check(repo, jobs, { q, ...query }, 9);
      }
    }
  });

  test("non-ASCII letters fold case too, at any length", () => {
    const { repo } = registry();
    const job = add(repo, { agent: "alpha", status: "succeeded", prompt: "ümlaut Übersicht" });
    add(repo, { agent: "alpha", status: "succeeded", prompt: "plain ascii" });
    const ids = (q: string) => repo.list({ q, limit: 10, offset: 0 }).rows.map((r) => r.id);
    for (const q of ["übersicht", "ÜMLAUT", "Üb", "üb", "ü", "Ü", "t Ü"]) expect(ids(q), q).toEqual([job.id]);
  });

  test("one or two characters in few jobs, even at the very end of an id, prompt or error, are found through the index", () => {
    const { repo } = registry();
    const jobs = Array.from({ length: 20 }, () => add(repo, { agent: "alpha", status: "succeeded", prompt: "plain work" }));
    jobs.push(add(repo, { agent: "beta", status: "failed", prompt: "ends in zq", error: "exit 1: kx" }));
    jobs.push(add(repo, { agent: "beta", status: "succeeded", prompt: "Q" }));
    const last = jobs[jobs.length - 1]!;
    for (const q of ["zq", "q", "Q", "kx", "x", ": ", last.id.slice(-2), last.id.slice(-1)]) check(repo, jobs, { q }, 5);
    check(repo, jobs, { q: "q", agent: "beta" }, 5);
  });

  test("a job is found by the text it has now: a new error, an edited prompt, and not after it is deleted", () => {
    const { repo, handle } = registry();
    const job = add(repo, { agent: "alpha", status: "running", prompt: "compile the kernel" });
    const ids = (q: string) => repo.list({ q, limit: 10, offset: 0 }).rows.map((r) => r.id);
    expect(ids("kernel")).toEqual([job.id]);
    repo.update(job.id, { status: "failed", endedAt: 5_000, error: "exit code 2: linker exploded" });
    expect(ids("linker")).toEqual([job.id]);
    expect(ids("kernel")).toEqual([job.id]);
    repo.update(job.id, { status: "queued", error: null });
    expect(ids("linker")).toEqual([]);
    repo.update(job.id, { prompt: "compile the bootloader" });
    expect(ids("kernel")).toEqual([]);
    expect(ids("bootloader")).toEqual([job.id]);
    // Updates that leave the text alone keep it found.
    repo.update(job.id, { status: "succeeded", outputBytes: 10, exitCode: 0 });
    expect(ids("bootloader")).toEqual([job.id]);
    handle.db.run(sql`delete from jobs where id = ${job.id}`);
    expect(ids("bootloader")).toEqual([]);
    expect(repo.list({ limit: 10, offset: 0 }).total).toBe(0);
    // The text index still matches the jobs table row for row.
    handle.db.run(sql`insert into jobs_search (jobs_search) values ('integrity-check')`);
  });

  test("a text search counts up to 1,000 matches past the page and says when it stopped", () => {
    const { repo } = registry();
    for (let i = 0; i < SEARCH_COUNT_CAP + 60; i++) add(repo, { agent: i % 2 ? "alpha" : "beta", status: "succeeded", prompt: `common task ${i}` });
    for (const q of ["common", "co", "c"]) {
      const first = repo.list({ q, limit: 50, offset: 0 });
      expect(first).toMatchObject({ total: SEARCH_COUNT_CAP, totalCapped: true });
      expect(first.rows).toHaveLength(50);
      const deep = repo.list({ q, limit: 50, offset: 500 });
      expect(deep).toMatchObject({ total: SEARCH_COUNT_CAP + 60, totalCapped: false });
      const filtered = repo.list({ q, agent: "alpha", limit: 50, offset: 0 });
      expect(filtered).toMatchObject({ total: (SEARCH_COUNT_CAP + 60) / 2, totalCapped: false });
    }
    expect(repo.list({ limit: 50, offset: 0 })).toMatchObject({ total: SEARCH_COUNT_CAP + 60, totalCapped: false });
  });
});
