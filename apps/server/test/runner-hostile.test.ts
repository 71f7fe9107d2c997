// A hostile runner: a session under a runner's own login (made as docs/runners.md says)
// that tries every write a runner must not make. Each is refused by PostgreSQL or ignored by the
// server, the server answers /api/health throughout, and the runner's own work still runs.
import { existsSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Job, OutputPage } from "@corral/shared";
import { api, sleep, startServer, tempDir, until, type TestServer } from "./helpers.js";
import { usePostgres } from "./postgres.js";
import { failedRunnerStart, startRunnerProcess } from "./runner-process.js";
import { query, runnerLoginFor } from "./runner-logins.js";
import { lastCopiedSeq } from "../src/jobs/output-log.js";
import { jobDataPaths } from "../src/jobs/worker-process.js";

const postgres = usePostgres();

describe.skipIf(!postgres.available)("a hostile runner's login", () => {
  const root = tempDir();
  const dataDir = path.join(root, "data");
  let owner = "";
  let env: Record<string, string> = {};
  let corral: TestServer;
  let box: { name: string; url: string; role: string };
  let other: { name: string; url: string; role: string };
  /** The runner process's id (stopped once it ran its job): a runner row of the hostile login's own. */
  let boxId = "";
  let hostile: pg.Client;
  const ids = { ownEnded: "", localEnded: "", localRunning: "", localQueued: "", waiting: "" };

  const job = async (id: string) => (await api<Job>(corral, "GET", `/api/jobs/${id}`)).body;
  const healthy = async () => expect((await api(corral, "GET", "/api/health")).status).toBe(200);
  const refused = (text: string, params: unknown[] = []) => expect(hostile.query(text, params), text).rejects.toMatchObject({ code: "42501" });
  const untouched = async (text: string, params: unknown[] = []) => expect((await hostile.query(text, params)).rowCount, text).toBe(0);
  const launch = async (agent: string, prompt: string, dir: string) =>
    (await api<Job>(corral, "POST", "/api/jobs", { agent, prompt, workdir: path.join(root, dir) })).body;

  beforeAll(async () => {
    owner = await postgres.database();
    env = { CORRAL_DATABASE_URL: owner, CORRAL_RUNNER_ANSWER_TIMEOUT_MS: "8000" };
    corral = await startServer(env, { root, dataDir });
    expect(
      (await api(corral, "POST", "/api/agents", { name: "gpuk", kind: "kiro", workdir: root, runnerLabel: "gpu", env: { GPU_TOKEN: "its-own" } }))
        .status,
    ).toBe(201);
    expect((await api(corral, "PATCH", "/api/agents/codex", { env: { OPENAI_API_KEY: "sk-server-only" } })).status).toBe(200);
    expect((await api(corral, "PATCH", "/api/agents/kiro", { maxConcurrent: 1 })).status).toBe(200);
    box = await runnerLoginFor(owner, "box", ["gpu"]);
    other = await runnerLoginFor(owner, "other", ["cpu"]);

    // The legitimate path under that login: a real runner runs its label's job end to end.
    const runner = await startRunnerProcess(root, { CORRAL_DATABASE_URL: box.url, CORRAL_RUNNER_NAME: box.name, CORRAL_RUNNER_LABELS: "gpu" });
    boxId = runner.id;
    ids.ownEnded = (await launch("gpuk", "print 2\nwrite made.txt ok", "g")).id;
    const [ran] = await corral.services.waits.waitFor([ids.ownEnded], 20_000);
    expect(ran).toMatchObject({ status: "succeeded", runner: boxId });
    expect(await runner.stop()).toBe(0);
    expect(runner.stderr()).toBe("");

    ids.localEnded = (await launch("kiro", "print 1", "l")).id;
    expect((await corral.services.waits.waitFor([ids.localEnded], 15_000))[0]).toMatchObject({ status: "succeeded", runner: "local" });
    ids.localRunning = (await launch("kiro", "sleep 60", "r1")).id;
    await until(async () => ((await job(ids.localRunning)).status === "running" ? true : undefined), 10_000, "the local job running");
    ids.localQueued = (await launch("kiro", "print 1", "r2")).id;
    expect(await job(ids.localQueued)).toMatchObject({ status: "queued", runner: "local" });
    // No runner runs now: a job of its label waits, unclaimed.
    ids.waiting = (await launch("gpuk", "print 1", "w")).id;
    expect(await job(ids.waiting)).toMatchObject({ status: "queued", runner: null });

    hostile = new pg.Client({ connectionString: box.url });
    await hostile.connect();
  }, 120_000);

  afterAll(async () => {
    await hostile?.end();
    await corral?.close();
  });

  test("cannot put an ended job back in the queue with another prompt and workdir, its own or the server's", async () => {
    const evil = path.join(root, "evil");
    // The server's ended job is not even visible to it (and its prompt and workdir are no column it may write).
    await untouched("update jobs set status = 'queued', runner = null where id = $1", [ids.localEnded]);
    await refused("update jobs set status = 'queued', runner = null, prompt = 'write pwned.txt x', workdir = $2 where id = $1", [
      ids.localEnded,
      evil,
    ]);
    // Its own ended job: refused, whichever part it tries.
    await refused("update jobs set status = 'queued', runner = null, prompt = 'write pwned.txt x', workdir = $2 where id = $1", [ids.ownEnded, evil]);
    await refused("update jobs set status = 'queued', runner = null where id = $1", [ids.ownEnded]);
    await refused("update jobs set error = 'rewritten' where id = $1", [ids.ownEnded]);
    await sleep(2500);
    expect(await job(ids.localEnded)).toMatchObject({ status: "succeeded", prompt: "print 1", runner: "local" });
    expect(await job(ids.ownEnded)).toMatchObject({ status: "succeeded", prompt: "print 2\nwrite made.txt ok", runner: boxId });
    expect(existsSync(evil)).toBe(false);
    await healthy();
  });

  test("cannot change a queued job's prompt or workdir: the server's, or one of its label it claimed", async () => {
    await untouched("update jobs set status = 'running' where id = $1", [ids.localQueued]);
    await refused("update jobs set prompt = 'write pwned.txt x', workdir = '/' where id = $1", [ids.localQueued]);
    expect((await hostile.query("select id from jobs where id = $1 or id = $2", [ids.localQueued, ids.localRunning])).rowCount).toBe(0);
    await refused("update jobs set prompt = 'write pwned.txt x' where id = $1", [ids.waiting]);
    // Claiming it is its right; changing what it was launched with, or handing it to the server, is not.
    expect((await hostile.query("update jobs set runner = $2 where id = $1", [ids.waiting, boxId])).rowCount).toBe(1);
    await refused("update jobs set workdir = '/' where id = $1", [ids.waiting]);
    // Which job it relaunched is the launch's word: a runner cannot make one job claim another as its original.
    await refused("update jobs set relaunch_of = $2 where id = $1", [ids.waiting, ids.ownEnded]);
    // With every column granted (as runner-role.sql did before this version), the registry still refuses it.
    await query(owner, `grant update on jobs to ${box.role}`);
    await refused("update jobs set workdir = '/', prompt = 'write pwned.txt x' where id = $1", [ids.waiting]);
    await refused("update jobs set relaunch_of = $2 where id = $1", [ids.waiting, ids.ownEnded]);
    await query(owner, `revoke update on jobs from ${box.role}`);
    await refused("update jobs set runner = 'local' where id = $1", [ids.waiting]);
    await refused("update jobs set status = 'running', runner = null where id = $1", [ids.waiting]);
    expect((await hostile.query("update jobs set runner = null where id = $1", [ids.waiting])).rowCount).toBe(1);
    expect(await job(ids.localQueued)).toMatchObject({ prompt: "print 1", workdir: path.join(root, "r2"), runner: "local" });
    expect(await job(ids.waiting)).toMatchObject({
      status: "queued",
      prompt: "print 1",
      workdir: path.join(root, "w"),
      runner: null,
      relaunchOf: null,
    });
    expect((await api<{ jobs: Job[] }>(corral, "GET", `/api/jobs/${ids.ownEnded}/relaunches`)).body.jobs).toEqual([]);
    await healthy();
  });

  test("reads only the agents of its labels and their jobs: no other agent's env", async () => {
    const agents = await hostile.query<{ name: string; env: Record<string, string> }>("select name, env from agents");
    expect(agents.rows).toEqual([{ name: "gpuk", env: { GPU_TOKEN: "its-own" } }]);
    expect((await hostile.query("select env from agents where name = 'codex'")).rowCount).toBe(0);
    expect((await hostile.query("select id from jobs where agent <> 'gpuk'")).rowCount).toBe(0);
    await refused("select * from runner_logins");
    await healthy();
  });

  test("cannot write into a server job's output, and the server copies none a NOTIFY names", async () => {
    await refused("insert into job_output (job_id, seq, stream, data, at) values ($1, 1, 'out', 'INJECTED', 0)", [ids.localRunning]);
    // Even a row that got there another way: the NOTIFY is only a hint, and a server job's log is its own.
    await query(owner, "insert into job_output (job_id, seq, stream, data, at) values ($1, 1, 'out', 'INJECTED', 0)", [ids.localRunning]);
    await hostile.query("select pg_notify('corral_job', $1)", [`${ids.localRunning}:1`]);
    await hostile.query("select pg_notify('corral_job', $1)", [ids.localRunning]);
    await sleep(1000);
    const output = await api<OutputPage>(corral, "GET", `/api/jobs/${ids.localRunning}/output?cursor=0`);
    expect(output.body.chunks.map((c) => c.text).join("")).not.toContain("INJECTED");
    await healthy();
  });

  test("stores output chunks of at most 16 MiB, and the server copies big ones a bounded page at a time", async () => {
    await expect(
      hostile.query("insert into job_output (job_id, seq, stream, data, at) values ($1, 100, 'out', repeat('x', 17 * 1024 * 1024), 0)", [
        ids.ownEnded,
      ]),
    ).rejects.toMatchObject({ code: "23514" });
    for (const seq of [101, 102, 103, 104]) {
      await hostile.query("insert into job_output (job_id, seq, stream, data, at) values ($1, $2, 'out', repeat('y', 10 * 1024 * 1024), 0)", [
        ids.ownEnded,
        seq,
      ]);
    }
    await hostile.query("select pg_notify('corral_job', $1)", [`${ids.ownEnded}:104`]);
    const log = jobDataPaths(dataDir, ids.ownEnded).log;
    // Pages stop at 16 MiB: all four are copied, over more than one page.
    await until(async () => (lastCopiedSeq(log) === 104 ? true : undefined), 15_000, "the big chunks copied");
    await healthy();
  });

  test("writes no audit entries and reads none", async () => {
    await refused("insert into audit_log (at, action, job_id, agent, door) values (0, 'cancel', $1, 'kiro', 'rest')", [ids.localRunning]);
    await refused("select * from audit_log");
    await healthy();
  });

  test("registers and heartbeats only under its own name and labels; a runner started under another is told what to set", async () => {
    const now = Date.now();
    const row = (id: string, name: string, labels: string) =>
      hostile.query("insert into runners (id, name, labels, hostname, version, started_at, heartbeat_at) values ($1, $2, $3, 'h', '0', $4, $4)", [
        id,
        name,
        labels,
        now,
      ]);
    await expect(row("fake-1", other.name, '["cpu"]')).rejects.toMatchObject({ code: "42501" });
    await expect(row("fake-2", box.name, '["cpu"]')).rejects.toMatchObject({ code: "42501" });
    await expect(row("local", box.name, '["gpu"]')).rejects.toMatchObject({ code: "42501" });
    await query(
      owner,
      "insert into runners (id, name, labels, hostname, version, started_at, heartbeat_at) values ('other-1', $1, '[\"cpu\"]', 'h', '0', 1, 1)",
      [other.name],
    );
    await untouched("update runners set heartbeat_at = $1 where id = 'other-1'", [now]);
    await refused("update runners set name = $1 where id = $2", [other.name, boxId]);
    await refused("update runners set labels = '[\"cpu\"]' where id = $1", [boxId]);

    const asOther = await failedRunnerStart(root, { CORRAL_DATABASE_URL: box.url, CORRAL_RUNNER_NAME: other.name, CORRAL_RUNNER_LABELS: "gpu" });
    expect(asOther.code).toBe(1);
    expect(asOther.stderr).toContain(`CORRAL_RUNNER_NAME: the login ${box.role} is runner "${box.name}": set CORRAL_RUNNER_NAME=${box.name}`);
    const moreLabels = await failedRunnerStart(root, { CORRAL_DATABASE_URL: box.url, CORRAL_RUNNER_NAME: box.name, CORRAL_RUNNER_LABELS: "gpu,cpu" });
    expect(moreLabels.code).toBe(1);
    expect(moreLabels.stderr).toContain(`CORRAL_RUNNER_LABELS: runner ${box.name} may serve gpu, not cpu`);
    await healthy();
  });

  test("cannot see or answer another runner's browsing request", async () => {
    await query(
      owner,
      "insert into runner_requests (id, runner, kind, path, read_offset, read_limit, asked_at) values ('req-other', 'other-1', 'list', '/', 0, 0, 1)",
    );
    expect((await hostile.query("select * from runner_requests")).rowCount).toBe(0);
    await untouched("update runner_requests set answered_at = 1, answer = '{}' where id = 'req-other'");
    await healthy();
  });

  // Two answers wait out the server's 8 s and a 300 MB string is built: long on a busy machine.
  test("an answer of 100+ MB or 10^8 entries is refused by the registry, one too many or of the wrong shape by the server, which answers throughout", async () => {
    // Announced afresh under its own name: the server asks it about the workdir its job ran in.
    const now = Date.now();
    await hostile.query(
      "insert into runners (id, name, labels, hostname, version, started_at, heartbeat_at) values ($1, $2, '[\"gpu\"]', 'h', '0', $3, $3)",
      [`${boxId}-again`, box.name, now],
    );
    const heartbeat = setInterval(
      () => void hostile.query("update runners set heartbeat_at = $1 where id = $2", [Date.now(), `${boxId}-again`]),
      1000,
    );
    /**
     * Runs an update of request `id` with the row locked first: building a 300 MB answer can take
     * longer than the server waits, and the server's clean-up would otherwise delete the row before
     * the update reaches it (0 rows, no check run). The clean-up waits for the lock instead.
     */
    const whileHeld = async (id: string, text: string, params: unknown[]) => {
      // A connection of its own: the heartbeat above goes on meanwhile, outside the transaction.
      const held = new pg.Client({ connectionString: box.url });
      await held.connect();
      try {
        await held.query("begin");
        await held.query("select 1 from runner_requests where id = $1 for update", [id]);
        const done = await held.query(text, params);
        await held.query("commit");
        return done;
      } finally {
        await held.end();
      }
    };
    try {
      const answering = async (answer: string, column: "answer" | "error" = "answer") => {
        const listing = api(corral, "GET", `/api/workdirs/list?path=${encodeURIComponent(path.join(root, "g"))}`);
        const id = await until(
          async () => (await hostile.query<{ id: string }>("select id from runner_requests where answered_at is null")).rows[0]?.id,
          5000,
          "the server's request",
        );
        const stored = whileHeld(id, `update runner_requests set answered_at = $2, ${column} = $3 where id = $1`, [id, Date.now(), answer]);
        await healthy();
        return {
          stored: await stored.then(
            () => "stored",
            (err: { code?: string }) => err.code,
          ),
          listing: await listing,
        };
      };
      const huge = await answering("x".repeat(110 * 1024 * 1024));
      expect(huge.stored).toBe("23514");
      // Unanswered: 504 once the server's wait ends; 503 naming the runner's login when the row
      // lock it held (see whileHeld) outlasted the server's lock_timeout, on a busy machine.
      expect([503, 504]).toContain(huge.listing.status);
      const entries = (n: number) => `{"path":"/x","truncated":false,"entries":[${"[],".repeat(n)}[]]}`;
      const hundredMillion = await (async () => {
        const listing = api(corral, "GET", `/api/workdirs/list?path=${encodeURIComponent(path.join(root, "g"))}`);
        const id = await until(
          async () => (await hostile.query<{ id: string }>("select id from runner_requests where answered_at is null")).rows[0]?.id,
          5000,
          "the server's request",
        );
        const stored = await whileHeld(
          id,
          `update runner_requests set answered_at = 1, answer = '{"entries":[' || repeat('[],', 100000000) || '[]]}' where id = $1`,
          [id],
        ).then(
          (done) => `stored ${done.rowCount}`,
          (err: { code?: string }) => err.code,
        );
        return { stored, listing: await listing };
      })();
      expect(hundredMillion.stored).toBe("23514");
      expect([503, 504]).toContain(hundredMillion.listing.status);

      const many = await answering(entries(1_000_000));
      expect(many.stored).toBe("stored");
      expect(many.listing).toMatchObject({
        status: 503,
        body: { error: expect.stringMatching(/sent an answer the server does not accept \(more than 5002 objects/) },
      });
      const big = await answering(`{"path":"/x","truncated":false,"entries":[],"pad":"${"y".repeat(9 * 1024 * 1024)}"}`);
      expect(big.listing).toMatchObject({ status: 503, body: { error: expect.stringMatching(/characters, over the/) } });
      const shape = await answering('{"path":"/x","truncated":false,"entries":"none"}');
      expect(shape.listing).toMatchObject({ status: 503, body: { error: expect.stringMatching(/entries: /) } });
      const status = await answering('{"status":200,"code":"invalid_input","error":"fine"}', "error");
      expect(status.listing).toMatchObject({ status: 503, body: { error: expect.stringMatching(/refusal the server does not accept \(status/) } });
      // An honest answer is still taken.
      const honest = await answering('{"path":"/x","truncated":false,"entries":[{"name":"a","type":"file","size":1,"mtime":1}]}');
      expect(honest.listing).toMatchObject({ status: 200, body: { entries: [{ name: "a" }] } });
    } finally {
      clearInterval(heartbeat);
    }
    await healthy();
  }, 120_000);

  test("a job it could not hand to the server stays its label's across a restart of the server", async () => {
    await refused("update jobs set runner = 'local' where id = $1", [ids.waiting]);
    await corral.close();
    corral = await startServer(env, { root, dataDir });
    await sleep(2500);
    expect(await job(ids.waiting)).toMatchObject({ status: "queued", runner: null, prompt: "print 1" });
    expect(await job(ids.ownEnded)).toMatchObject({ status: "succeeded" });
    await healthy();
  });
});
