// A hostile runner's login against the registry itself rather than its rows: locks it can hold
// forever (advisory, row and table locks every process shares) and usage it can store for the
// jobs it holds. The server answers throughout, says who holds what it waits for, and a budget
// is never undone by a runner's negative or NaN cost.
import { readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Job } from "@corral/shared";
import { api, startServer, tempDir, until, type TestServer } from "./helpers.js";
import { usePostgres } from "./postgres.js";
import { query, runnerLoginFor } from "./runner-logins.js";
import { TRANSACTIONS } from "../src/db/pg/in-order.js";

const postgres = usePostgres();

/** `work` settled within `ms`, or a rejection saying it hung. */
async function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, hung]);
  } finally {
    clearTimeout(timer);
  }
}

describe.skipIf(!postgres.available)("a hostile runner's login and the registry's locks and sums", () => {
  const root = tempDir();
  let owner = "";
  let corral: TestServer;
  let box: { name: string; url: string; role: string };
  let hostile: pg.Client;
  const boxId = "box-hostile-1";
  let held = "";

  const launch = (agent: string, dir: string) => api<Job>(corral, "POST", "/api/jobs", { agent, prompt: "print 1", workdir: path.join(root, dir) });

  beforeAll(async () => {
    owner = await postgres.database();
    corral = await startServer({ CORRAL_DATABASE_URL: owner, CORRAL_REGISTRY_LOCK_TIMEOUT_MS: "1500" }, { root });
    expect((await api(corral, "POST", "/api/agents", { name: "gpuk", kind: "kiro", workdir: root, runnerLabel: "gpu" })).status).toBe(201);
    box = await runnerLoginFor(owner, "box", ["gpu"]);
    hostile = new pg.Client({ connectionString: box.url });
    await hostile.connect();
    const now = Date.now();
    await hostile.query(
      "insert into runners (id, name, labels, hostname, version, started_at, heartbeat_at) values ($1, $2, '[\"gpu\"]', 'h', '0', $3, $3)",
      [boxId, box.name, now],
    );
    held = (await launch("gpuk", "g")).body.id;
    expect((await hostile.query("update jobs set runner = $2 where id = $1", [held, boxId])).rowCount).toBe(1);
    expect((await hostile.query("update jobs set status = 'running', attempt = 1, started_at = $2 where id = $1", [held, now])).rowCount).toBe(1);
  }, 60_000);

  afterAll(async () => {
    await hostile?.end();
    await corral?.close();
  }, 60_000);

  test("the lock every registry transaction takes, held forever: a launch answers 503 naming the login, health answers", async () => {
    await hostile.query("select pg_advisory_lock($1)", [TRANSACTIONS]);
    try {
      const refused = await within(30_000, "a launch while a runner holds the lock", launch("kiro", "l1"));
      expect(refused.status).toBe(503);
      expect(JSON.stringify(refused.body)).toContain(box.role);
      expect((await within(10_000, "health", api(corral, "GET", "/api/health"))).status).toBe(200);
    } finally {
      await hostile.query("select pg_advisory_unlock($1)", [TRANSACTIONS]);
    }
    expect((await within(30_000, "a launch once it let go", launch("kiro", "l2"))).status).toBe(201);
  }, 60_000);

  test("the lock every registry transaction takes, held while a queued job comes to start: no worker starts unrecorded, and the job runs once it is let go", async () => {
    const dir = path.join(root, "retried");
    // Attempt 1 fails (75, a transient failure), and attempt 2 comes to start while the lock is held.
    const queued = await api<Job>(corral, "POST", "/api/jobs", {
      agent: "kiro",
      prompt: "append starts.txt start\nfail-once failed-once 75 busy\nprint 1",
      workdir: dir,
      retry: { maxAttempts: 2, exitCodes: [75], backoffS: 2 },
    });
    expect(queued.status).toBe(201);
    const id = queued.body.id;
    await until(
      async () => {
        const job = (await api<Job>(corral, "GET", `/api/jobs/${id}`)).body;
        return job.status === "queued" && job.attempt === 2 ? job : undefined;
      },
      20_000,
      "attempt 1 failed and the retry waiting",
    );
    await hostile.query("select pg_advisory_lock($1)", [TRANSACTIONS]);
    try {
      // Past the backoff, and past the lock's timeout (1.5 s) more than twice: the start has met the lock.
      await new Promise((resolve) => setTimeout(resolve, 2000 + 4000));
    } finally {
      await hostile.query("select pg_advisory_unlock($1)", [TRANSACTIONS]);
    }
    const [ended] = await corral.services.waits.waitFor([id], 30_000);
    // The start waited for the lock: the job was neither failed for it nor run by a worker nothing followed.
    expect(ended).toMatchObject({ status: "succeeded", attempt: 2, error: null });
    expect(readFileSync(path.join(dir, "starts.txt"), "utf8")).toBe("start\nstart\n");
  }, 90_000);

  test("a held job's row locked in a transaction left open: cancelling it answers, naming the login", async () => {
    await hostile.query("begin");
    try {
      await hostile.query("select id from jobs where id = $1 for update", [held]);
      const cancel = await within(30_000, "a cancel while a runner locks the row", api(corral, "POST", `/api/jobs/${held}/cancel`));
      expect(cancel.status).toBe(503);
      expect(JSON.stringify(cancel.body)).toContain(box.role);
    } finally {
      await hostile.query("rollback");
    }
    expect((await within(10_000, "health", api(corral, "GET", "/api/health"))).status).toBe(200);
  }, 60_000);

  test("a table it may lock whole (job_attempts) in a transaction left open: reading the job answers, naming the login", async () => {
    await hostile.query("begin");
    try {
      await hostile.query("lock table job_attempts in access exclusive mode");
      const read = await within(30_000, "reading a job's attempts while a runner locks them", api(corral, "GET", `/api/jobs/${held}/attempts`));
      expect(read.status).toBe(503);
      expect(JSON.stringify(read.body)).toContain(box.role);
    } finally {
      await hostile.query("rollback");
    }
    expect((await within(10_000, "reading them once let go", api(corral, "GET", `/api/jobs/${held}/attempts`))).status).toBe(200);
  }, 60_000);

  test("a NOTIFY naming one of the server's own jobs announces nothing of it (not its whole file list, on every NOTIFY)", async () => {
    const local = (
      await api<Job>(corral, "POST", "/api/jobs", { agent: "kiro", prompt: "write a.txt 1\nwrite b.txt 2", workdir: path.join(root, "f") })
    ).body;
    const [done] = await corral.services.waits.waitFor([local.id], 20_000);
    expect(done).toMatchObject({ status: "succeeded", runner: "local" });
    expect((await corral.services.files.list(local.id)).length).toBe(2);
    const heard: string[] = [];
    const onFile = (event: { jobId: string }) => heard.push(event.jobId);
    const onJob = (job: Job) => heard.push(job.id);
    corral.services.files.on("file", onFile);
    corral.services.jobEvents.on("job", onJob);
    try {
      for (let i = 0; i < 5; i++) {
        await hostile.query("select pg_notify('corral_job', $1)", [`${local.id}:files`]);
        await hostile.query("select pg_notify('corral_job', $1)", [local.id]);
      }
      // Its own job, told the same way, is announced: the NOTIFYs were heard.
      await hostile.query("select pg_notify('corral_job', $1)", [held]);
      await until(async () => (heard.includes(held) ? true : undefined), 10_000, "the held job's NOTIFY heard");
      expect(heard.filter((id) => id === local.id)).toEqual([]);
    } finally {
      corral.services.files.off("file", onFile);
      corral.services.jobEvents.off("job", onJob);
    }
  }, 60_000);

  test("creates nothing in the registry's schema, even where every login may (PostgreSQL before 15), once runner-role.sql ran again", async () => {
    // PostgreSQL 14's default, which an upgraded cluster keeps.
    await query(owner, "grant create on schema public to public");
    await runnerLoginFor(owner, "again", ["cpu"]);
    await expect(hostile.query("create table public.planted (a int)")).rejects.toMatchObject({ code: "42501" });
    await expect(hostile.query("create function public.lower(varchar) returns text language sql as 'select 1::text'")).rejects.toMatchObject({
      code: "42501",
    });
    // The registry's owner still creates there (its next migration).
    await query(owner, "create table public.owners_own (a int); drop table public.owners_own");
  }, 60_000);

  test("stores no negative, NaN or infinite cost or tokens on a job it holds or its attempts: a budget stays spent", async () => {
    for (const value of ["-1000000", "NaN", "Infinity", "-Infinity"]) {
      await expect(hostile.query(`update jobs set cost_usd = $2::float8 where id = $1`, [held, value]), value).rejects.toMatchObject({
        code: "23514",
      });
    }
    for (const column of ["input_tokens", "output_tokens", "cached_input_tokens"]) {
      await expect(hostile.query(`update jobs set ${column} = -5 where id = $1`, [held]), column).rejects.toMatchObject({ code: "23514" });
    }
    await expect(
      hostile.query(
        "insert into job_attempts (job_id, attempt, status, started_at, output_start, cost_usd, input_tokens) values ($1, 7, 'running', 0, 0, 'NaN', -1)",
        [held],
      ),
    ).rejects.toMatchObject({ code: "23514" });
    await expect(
      hostile.query("insert into job_attempts (job_id, attempt, status, started_at, output_start, cost_usd) values ($1, 8, 'running', 0, 0, -5)", [
        held,
      ]),
    ).rejects.toMatchObject({ code: "23514" });
    // An honest report is taken.
    expect((await hostile.query("update jobs set cost_usd = 0.25, input_tokens = 10 where id = $1", [held])).rowCount).toBe(1);
    await query(owner, "select 1");
  }, 60_000);
});
