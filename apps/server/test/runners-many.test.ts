// Ten runner processes share one label and 500 jobs launched through REST: none is lost and none
// runs twice. Each worker appends its job's number to one shared file, so a job run twice would show.
import { readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterEach, describe, expect, test } from "vitest";
import type { Agent, Job } from "@corral/shared";
import { api, sleep, startServer, tempDir } from "./helpers.js";
import { usePostgres } from "./postgres.js";
import { startRunnerProcess } from "./runner-process.js";

const postgres = usePostgres();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const RUNNERS = 10;
/**
 * Each launch wakes all ten runners (NOTIFY corral_queue) and each tries to claim, so every job is
 * raced for by ten claimants whatever the total; 500 is about eight times what the agent runs at
 * once (64), so the queue stays full and runners also race for every slot a job's end frees, and
 * the run spans many heartbeats and claim polls. 2,000 (this test's first size) made the same races
 * four times as often and took 160–240 s of a 2-core CI run.
 */
const JOBS = 500;
/** Launches in flight at once. */
const BATCH = 50;

describe.skipIf(!postgres.available)("ten runners, five hundred jobs", () => {
  test("every job runs exactly once, spread over the runners", async () => {
    const root = tempDir();
    const url = await postgres.database();
    const corral = await startServer({ CORRAL_DATABASE_URL: url }, { root });
    cleanups.push(() => corral.close());
    const agent = await api<Agent>(corral, "POST", "/api/agents", {
      name: "tick",
      kind: "command",
      command: "/bin/sh",
      args: ["-c", "{prompt}"],
      runnerLabel: "pool",
      maxConcurrent: 64,
    });
    expect(agent.status).toBe(201);
    const runners = await Promise.all(
      Array.from({ length: RUNNERS }, (_, i) =>
        startRunnerProcess(root, { CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LABELS: "pool", CORRAL_DATA_DIR: path.join(root, `runner-${i}`) }),
      ),
    );
    for (const runner of runners) cleanups.push(() => runner.stop("SIGKILL"));

    const started = Date.now();
    const ran = path.join(root, "ran.txt");
    const workdir = path.join(root, "w");
    const ids: string[] = [];
    for (let start = 0; start < JOBS; start += BATCH) {
      const launched = await Promise.all(
        Array.from({ length: Math.min(BATCH, JOBS - start) }, (_, k) =>
          api<Job>(corral, "POST", "/api/jobs", { agent: "tick", prompt: `echo ${start + k} >> ${ran}`, workdir, sharedWorkdir: true }),
        ),
      );
      for (const res of launched) {
        expect(res.status).toBe(201);
        ids.push(res.body.id);
      }
    }

    const db = new pg.Client({ connectionString: url });
    await db.connect();
    cleanups.push(() => db.end());
    const deadline = Date.now() + 150_000;
    for (;;) {
      const { rows } = await db.query<{ open: string }>("select count(*) as open from jobs where status in ('queued', 'running')");
      if (Number(rows[0]?.open) === 0) break;
      if (Date.now() > deadline) throw new Error(`${rows[0]?.open} of ${JOBS} jobs had not ended after 150 s`);
      await sleep(500);
    }

    const seconds = Math.round((Date.now() - started) / 1000);
    const { rows: jobs } = await db.query<{ id: string; status: string; attempt: number; runner: string | null }>(
      "select id, status, attempt, runner from jobs where agent = 'tick'",
    );
    expect(jobs.length).toBe(JOBS);
    expect(new Set(jobs.map((j) => j.id))).toEqual(new Set(ids));
    expect(jobs.filter((j) => j.status !== "succeeded" || j.attempt !== 1)).toEqual([]);
    const { rows: attempts } = await db.query<{ job_id: string; n: string }>(
      "select job_id, count(*) as n from job_attempts group by job_id having count(*) <> 1",
    );
    expect(attempts).toEqual([]);
    // Each worker ran once: its number is in the shared file once.
    const numbers = readFileSync(ran, "utf8").trim().split("\n").map(Number);
    expect(numbers.length).toBe(JOBS);
    expect(new Set(numbers).size).toBe(JOBS);
    // Spread: several runners took a share (which ones, and how much, is up to the race for claims).
    const runnerIds = new Set(runners.map((r) => r.id));
    expect(jobs.every((j) => j.runner !== null && runnerIds.has(j.runner))).toBe(true);
    const shares = new Map<string, number>();
    for (const job of jobs) shares.set(job.runner as string, (shares.get(job.runner as string) ?? 0) + 1);
    expect(shares.size).toBeGreaterThanOrEqual(3);
    console.log(
      `${JOBS} jobs launched and run in ${seconds} s over ${shares.size} runners: ${[...shares.values()].sort((a, b) => b - a).join(", ")}`,
    );
  }, 240_000);
});
