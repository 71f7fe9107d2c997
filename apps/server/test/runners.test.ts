// `corral runner` as a real child process on the test run's PostgreSQL, beside a real server: it
// claims the jobs of agents asking for one of its labels, runs them with the fake CLIs, and the
// server hears of every change through NOTIFY.
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterEach, describe, expect, test } from "vitest";
import type { Agent, DirListing, Job, JobAttempt, JobFiles, OutputPage, RunnerList } from "@corral/shared";
import { LISTEN_APPLICATION } from "../src/db/pg/job-changes.js";
import { api, killGroupOf, startServer, tempDir, until, type TestServer } from "./helpers.js";
import { usePostgres } from "./postgres.js";
import { failedRunnerStart, startRunnerProcess, type RunnerProcess } from "./runner-process.js";
import { pgRegistryAt } from "./test-registry.js";

const postgres = usePostgres();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function server(url: string, root: string): Promise<TestServer> {
  const started = await startServer({ CORRAL_DATABASE_URL: url }, { root });
  cleanups.push(() => started.close());
  return started;
}

async function runner(root: string, env: Record<string, string>): Promise<RunnerProcess> {
  const started = await startRunnerProcess(root, env);
  cleanups.push(() => started.stop("SIGKILL"));
  return started;
}

test("corral runner refuses to start without CORRAL_DATABASE_URL, saying what to set", async () => {
  const root = tempDir();
  const { code, stderr } = await failedRunnerStart(root, { CORRAL_DATABASE_URL: "" });
  expect(code).toBe(1);
  expect(stderr).toMatch(/needs CORRAL_DATABASE_URL: the PostgreSQL URL/);
  const bad = await failedRunnerStart(root, { CORRAL_DATABASE_URL: "postgres://127.0.0.1:1/x", CORRAL_RUNNER_LABELS: "gpu,Big Disk" });
  expect(bad.code).toBe(1);
  expect(bad.stderr).toMatch(/CORRAL_RUNNER_LABELS: "Big Disk" is not a label/);
});

describe.skipIf(!postgres.available)("corral runner", () => {
  test("runs a labelled agent's job launched on the server, and the server sees it end, with its files and attempt", async () => {
    const root = tempDir();
    const url = await postgres.database();
    const corral = await server(url, root);
    expect((await api<Agent>(corral, "PATCH", "/api/agents/kiro", { runnerLabel: "gpu" })).status).toBe(200);
    const box = await runner(root, { CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LABELS: "gpu, big-disk", CORRAL_RUNNER_NAME: "box-1" });

    const heardFiles: string[] = [];
    corral.services.files.on("file", ({ file }) => heardFiles.push(`${file.change} ${file.path}`));
    const launched = await api<Job>(corral, "POST", "/api/jobs", {
      agent: "kiro",
      prompt: "print 2\nwrite made.txt ok",
      workdir: path.join(root, "w"),
    });
    expect(launched.status).toBe(201);
    const since = Date.now();
    // Heard through NOTIFY: waitFor wakes on the server's job events only, so it returns well before its timeout.
    const [ended] = await corral.services.waits.waitFor([launched.body.id], 12_000);
    expect(Date.now() - since).toBeLessThan(10_000);
    expect(ended).toMatchObject({ status: "succeeded", exitCode: 0, runner: box.id });
    expect(ended?.pid).toBeGreaterThan(0);
    // Its output was copied into the server's own log before its end was told: every read path has all of it.
    const output = await api<OutputPage>(corral, "GET", `/api/jobs/${launched.body.id}/output?cursor=0`);
    expect(output.body.chunks.map((c) => c.text).join("")).toBe("line 1\nline 2\nwrote made.txt\ndone kiro-cli-chat\n");
    expect(output.body.complete).toBe(true);
    expect(corral.services.output.outputTail(ended as Job, 100)).toContain("done kiro-cli-chat");
    expect((await api<Job>(corral, "GET", `/api/jobs/${launched.body.id}`)).body).toMatchObject({ status: "succeeded", runner: box.id });
    const attempts = await api<{ attempts: JobAttempt[] }>(corral, "GET", `/api/jobs/${launched.body.id}/attempts`);
    expect(attempts.body.attempts).toMatchObject([{ attempt: 1, status: "succeeded", exitCode: 0 }]);
    const files = await api<JobFiles>(corral, "GET", `/api/jobs/${launched.body.id}/files`);
    expect(files.body.files).toMatchObject([{ path: "made.txt", change: "created" }]);
    // Told live too (the job page and the WebSocket hear of it), not only stored.
    await until(() => (heardFiles.includes("created made.txt") ? true : undefined), 5000, "the file event told");

    // An agent without a label is still the server's: no runner takes its job.
    const local = await api<Job>(corral, "POST", "/api/jobs", { agent: "claude", prompt: "hello", workdir: path.join(root, "c") });
    const [ran] = await corral.services.waits.waitFor([local.body.id], 15_000);
    expect(ran).toMatchObject({ status: "succeeded", runner: "local" });

    const registry = await pgRegistryAt(url);
    cleanups.push(() => registry.close());
    const row = (await registry.runners.list()).find((r) => r.id === box.id);
    expect(row).toMatchObject({ id: box.id, name: "box-1", labels: ["gpu", "big-disk"], stoppedAt: null });
    // It heartbeats every 2 s.
    await until(async () => ((await registry.runners.get(box.id))?.heartbeatAt ?? 0) > (row?.heartbeatAt ?? 0) || undefined, 6000, "a heartbeat");
    const listed = await api<RunnerList>(corral, "GET", "/api/runners");
    // The server itself first: the built-in runner `local`, which ran the claude job.
    expect(listed.body.runners).toMatchObject([
      { id: "local", name: "local", labels: [], state: "running", activeJobs: 0, stoppedAt: null },
      { id: box.id, name: "box-1", labels: ["gpu", "big-disk"], state: "running", activeJobs: 0, stoppedAt: null },
    ]);
    expect(await box.stop()).toBe(0);
    expect((await registry.runners.get(box.id))?.stoppedAt).toBeGreaterThan(0);
    expect((await api<RunnerList>(corral, "GET", "/api/runners")).body.runners).toMatchObject([
      { id: "local", state: "running" },
      { id: box.id, state: "stopped" },
    ]);
  });

  test("a runner's file changes are told as they are stored, not only with its job's next change", async () => {
    const root = tempDir();
    const url = await postgres.database();
    const corral = await server(url, root);
    await api(corral, "PATCH", "/api/agents/kiro", { runnerLabel: "gpu" });
    await runner(root, { CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LABELS: "gpu" });
    const heard: string[] = [];
    corral.services.files.on("file", ({ file }) => heard.push(`${file.change} ${file.path}`));
    const job = await api<Job>(corral, "POST", "/api/jobs", { agent: "kiro", prompt: "write live.txt ok\nsleep 4", workdir: path.join(root, "w") });
    await until(() => (heard.includes("created live.txt") ? true : undefined), 10_000, "the file change told");
    expect((await api<Job>(corral, "GET", `/api/jobs/${job.body.id}`)).body.status).toBe("running");
    await corral.services.cancels.cancel(job.body.id);
  });

  test("a stopped runner finishes the jobs it runs and claims no more; a second signal cancels them", async () => {
    const root = tempDir();
    const url = await postgres.database();
    const corral = await server(url, root);
    await api(corral, "PATCH", "/api/agents/kiro", { runnerLabel: "gpu" });
    const box = await runner(root, { CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LABELS: "gpu" });
    const launch = (workdir: string) =>
      api<Job>(corral, "POST", "/api/jobs", { agent: "kiro", prompt: "print 1\nsleep 2\nprint 2", workdir: path.join(root, workdir) });
    const running = await launch("a");
    await until(
      async () => ((await api<Job>(corral, "GET", `/api/jobs/${running.body.id}`)).body.status === "running" ? true : undefined),
      10_000,
      "the job started",
    );
    box.child.kill("SIGTERM");
    await until(() => (/finishing the 1 job/.test(box.stdout()) ? true : undefined), 5000, "the runner says it finishes its job");
    const waiting = await launch("b");
    expect(await box.exited).toBe(0);
    expect((await api<Job>(corral, "GET", `/api/jobs/${running.body.id}`)).body).toMatchObject({ status: "succeeded", runner: box.id });
    const output = await api<OutputPage>(corral, "GET", `/api/jobs/${running.body.id}/output?cursor=0`);
    expect(output.body.chunks.map((c) => c.text).join("")).toContain("line 2");
    // Launched while it finished: left for another runner.
    expect((await api<Job>(corral, "GET", `/api/jobs/${waiting.body.id}`)).body).toMatchObject({ status: "queued", runner: null });

    const next = await runner(root, { CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LABELS: "gpu" });
    await until(
      async () => ((await api<Job>(corral, "GET", `/api/jobs/${waiting.body.id}`)).body.status === "running" ? true : undefined),
      10_000,
      "the next runner took it",
    );
    next.child.kill("SIGTERM");
    await until(() => (/finishing the 1 job/.test(next.stdout()) ? true : undefined), 5000, "the runner says it finishes its job");
    next.child.kill("SIGTERM");
    expect(await next.exited).toBe(0);
    expect(next.stdout()).toMatch(/cancelling the 1 job/);
    expect((await api<Job>(corral, "GET", `/api/jobs/${waiting.body.id}`)).body).toMatchObject({ status: "cancelled", runner: next.id });
  });

  test("keeps an agent's maxConcurrent across two runners", async () => {
    const root = tempDir();
    const url = await postgres.database();
    const corral = await server(url, root);
    await api(corral, "PATCH", "/api/agents/kiro", { runnerLabel: "gpu", maxConcurrent: 1 });
    const ids: string[] = [];
    for (const i of [1, 2, 3]) {
      const launched = await api<Job>(corral, "POST", "/api/jobs", {
        agent: "kiro",
        prompt: "sleep 0.6\nprint 1",
        workdir: path.join(root, `w${i}`),
      });
      ids.push(launched.body.id);
    }
    const registry = await pgRegistryAt(url);
    cleanups.push(() => registry.close());
    const boxes = await Promise.all([
      runner(root, { CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LABELS: "gpu" }),
      runner(root, { CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LABELS: "gpu", CORRAL_DATA_DIR: path.join(root, "data-2") }),
    ]);
    let most = 0;
    const ended = await until(
      async () => {
        const rows = await Promise.all(ids.map((id) => registry.jobs.get(id)));
        most = Math.max(most, rows.filter((r) => r?.status === "running").length);
        return rows.every((r) => r?.status === "succeeded") ? rows : undefined;
      },
      30_000,
      "the three jobs to succeed",
    );
    expect(most).toBe(1);
    expect(new Set(ended.map((r) => r?.runner)).size).toBeGreaterThanOrEqual(1);
    for (const row of ended) expect(boxes.map((b) => b.id)).toContain(row?.runner);
  });

  test("a runner sees an agent changed on the server: a raised maxConcurrent starts its next job beside the one it runs, without a restart", async () => {
    const root = tempDir();
    const url = await postgres.database();
    const corral = await server(url, root);
    await api(corral, "PATCH", "/api/agents/kiro", { runnerLabel: "gpu", maxConcurrent: 1 });
    const box = await runner(root, { CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LABELS: "gpu" });
    const launch = async (workdir: string) =>
      (await api<Job>(corral, "POST", "/api/jobs", { agent: "kiro", prompt: "print 1\nhang", workdir: path.join(root, workdir) })).body.id;
    const status = async (id: string) => (await api<Job>(corral, "GET", `/api/jobs/${id}`)).body;
    const first = await launch("w1");
    await until(async () => ((await status(first)).status === "running" ? true : undefined), 10_000, "the first job running");
    const second = await launch("w2");
    // One at a time: the second waits, claimed by no runner.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(await status(second)).toMatchObject({ status: "queued", runner: null });

    expect((await api<Agent>(corral, "PATCH", "/api/agents/kiro", { maxConcurrent: 2 })).status).toBe(200);
    // The runner claims it and starts it at once: its own queue reads the agent's new limit, not the one it read before.
    // (With runners keeping agents as they last read them, this held only because each claim's transaction emptied that cache.)
    const started = await until(
      async () => {
        const job = await status(second);
        return job.status === "running" ? job : undefined;
      },
      10_000,
      "the second job running beside the first",
    );
    expect(started.runner).toBe(box.id);
    expect((await status(first)).status).toBe("running");
    for (const id of [first, second]) await api(corral, "POST", `/api/jobs/${id}/cancel`);
  });

  test("a cancel reaches the runner at once (NOTIFY), or at its next heartbeat when only stored", async () => {
    const root = tempDir();
    const url = await postgres.database();
    const corral = await server(url, root);
    await api(corral, "PATCH", "/api/agents/kiro", { runnerLabel: "gpu" });
    const box = await runner(root, { CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LABELS: "gpu" });
    const running = async (workdir: string) => {
      const launched = await api<Job>(corral, "POST", "/api/jobs", { agent: "kiro", prompt: "print 1\nhang", workdir: path.join(root, workdir) });
      return until(async () => {
        const job = (await api<Job>(corral, "GET", `/api/jobs/${launched.body.id}`)).body;
        return job.status === "running" ? job : undefined;
      });
    };

    const first = await running("w1");
    expect(first.runner).toBe(box.id);
    // A server stopping with CORRAL_STOP_WORKERS_ON_EXIT=1 cancels its own jobs only: a runner's go on.
    await corral.services.cancels.cancelAll();
    expect((await api<Job>(corral, "GET", `/api/jobs/${first.id}`)).body.status).toBe("running");
    const asked = Date.now();
    const cancelled = await api<Job>(corral, "POST", `/api/jobs/${first.id}/cancel`);
    // The answer waits for the runner to report the worker gone (SIGTERM, and the fake CLI obeys it).
    expect(cancelled.body).toMatchObject({ status: "cancelled", runner: box.id, cancel: { by: "rest" } });
    expect(Date.now() - asked).toBeLessThan(2000);
    expect(() => process.kill(first.pid as number, 0)).toThrow();

    // Stored without a NOTIFY (as if the runner's listening connection had been down): found at a heartbeat.
    const second = await running("w2");
    const registry = await pgRegistryAt(url);
    cleanups.push(() => registry.close());
    await registry.jobs.update(second.id, { cancelRequestedAt: Date.now(), cancelledBy: "server" });
    const [ended] = await corral.services.waits.waitFor([second.id], 6000);
    expect(ended).toMatchObject({ status: "cancelled", runner: box.id });
  });

  test("a runner hears cancels, browsing requests and queued jobs on one connection, and all of them on a new one once it is killed", async () => {
    const root = tempDir();
    const url = await postgres.database();
    const corral = await server(url, root);
    await api(corral, "PATCH", "/api/agents/kiro", { runnerLabel: "gpu", maxConcurrent: 4 });
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    cleanups.push(() => db.end());
    /** The listening connections on this test's database, with what each last ran. */
    const listening = async () =>
      (
        await db.query<{ pid: number; state: string; query: string }>(
          "select pid, state, query from pg_stat_activity where application_name = $1 and datname = current_database()",
          [LISTEN_APPLICATION],
        )
      ).rows;
    // The server's one, for its job changes and browsing answers.
    const [serverPid, ...more] = (await listening()).map((r) => r.pid);
    expect(more).toEqual([]);
    // The claim poll a minute away: a job is claimed at once only if its NOTIFY was heard.
    const box = await runner(root, { CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LABELS: "gpu", CORRAL_RUNNER_POLL_MS: "60000" });
    /** The runner's listening connection once it LISTENs (its last statement done), other than `not`. */
    const runnerListening = (not?: number) =>
      until(
        async () => {
          const rows = (await listening()).filter((r) => r.pid !== serverPid);
          expect(rows.length).toBeLessThanOrEqual(1);
          const [row] = rows;
          return row && row.pid !== not && row.state === "idle" && row.query.startsWith("listen ") ? row.pid : undefined;
        },
        10_000,
        "the runner's listening connection",
      );
    const first = await runnerListening();
    const registry = await pgRegistryAt(url);
    cleanups.push(() => registry.close());
    const heartbeat = async () => (await registry.runners.get(box.id))?.heartbeatAt ?? 0;
    /** Runs `act` just after a heartbeat and checks it was done before the next: the heartbeat, which finds cancels and requests too, did not do it. */
    const beforeNextHeartbeat = async <T>(act: () => Promise<T>): Promise<T> => {
      const last = await heartbeat();
      const beat = await until(async () => ((await heartbeat()) > last ? heartbeat() : undefined), 6000, "a heartbeat");
      const done = await act();
      expect(await heartbeat()).toBe(beat);
      return done;
    };
    const hearsEachChannel = async (workdir: string) => {
      const launched = await api<Job>(corral, "POST", "/api/jobs", { agent: "kiro", prompt: "print 1\nhang", workdir: path.join(root, workdir) });
      // Queued jobs: claimed well before the poll.
      const running = await until(
        async () => {
          const job = (await api<Job>(corral, "GET", `/api/jobs/${launched.body.id}`)).body;
          return job.status === "running" ? job : undefined;
        },
        10_000,
        "the job claimed and running",
      );
      expect(running.runner).toBe(box.id);
      // Browsing requests: the runner answers for its workdir.
      const listing = await beforeNextHeartbeat(() =>
        api<DirListing>(corral, "GET", `/api/workdirs/list?path=${encodeURIComponent(path.join(root, workdir))}`),
      );
      expect(listing.status).toBe(200);
      // Cancels: the worker is stopped and reported ended.
      const cancelled = await beforeNextHeartbeat(() => api<Job>(corral, "POST", `/api/jobs/${launched.body.id}/cancel`));
      expect(cancelled.body).toMatchObject({ status: "cancelled", runner: box.id });
    };
    await hearsEachChannel("w1");

    await db.query("select pg_terminate_backend($1)", [first]);
    const second = await runnerListening(first);
    expect(second).not.toBe(first);
    await hearsEachChannel("w2");
    expect(box.stderr()).toMatch(/the connection that hears of cancels, browsing requests and queued jobs failed/);
  });

  test("refuses to start under a name a live runner on another machine holds, saying which, since when and what to do; its own machine's earlier runner does not stop it", async () => {
    const root = tempDir();
    const url = await postgres.database();
    // The registry's tables, as the server creates them; no server needed to start a runner.
    const registry = await pgRegistryAt(url);
    cleanups.push(() => registry.close());
    let n = 0;
    /** A runner of that name registered as if from `hostname`, its last heartbeat `ago` ms ago. */
    const registered = async (hostname: string, ago: number, stopped = false) => {
      const now = Date.now();
      const id = `${hostname}-${++n}`;
      await registry.runners.register({
        id,
        name: "gpu-box",
        labels: ["gpu"],
        hostname,
        version: "0",
        startedAt: now - 60_000,
        heartbeatAt: now - ago,
        stoppedAt: stopped ? now - ago : null,
      });
      return id;
    };
    const env = { CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LABELS: "gpu", CORRAL_RUNNER_NAME: "gpu-box", CORRAL_RUNNER_LEASE_S: "10" };
    const starts = async () => {
      const box = await runner(root, env);
      expect(await box.stop()).toBe(0);
    };

    // Stopped, or silent past the lease (CORRAL_RUNNER_LEASE_S, as the server reads it): the name is free.
    const stopped = await registered("other-box", 1000, true);
    await starts();
    await registry.runners.markStopped(stopped, Date.now());
    await registered("other-box", 11_000);
    await starts();

    const live = await registered("other-box", 2000);
    const refused = await failedRunnerStart(root, env);
    expect(refused.code).toBe(1);
    const said = new RegExp(
      `^CORRAL_RUNNER_NAME: "gpu-box" is taken by a runner on host other-box \\(${live}, last heartbeat (\\d+) s ago, within the lease of 10 s\\); .*Give this machine \\(${os.hostname()}\\) another CORRAL_RUNNER_NAME, or stop the runner on other-box; if it is gone, the name is free once its lease runs out, in (\\d+) s\\.\n$`,
    ).exec(refused.stderr);
    expect(said, refused.stderr).not.toBeNull();
    const [ago, freeIn] = [Number(said?.[1]), Number(said?.[2])];
    expect(ago).toBeGreaterThanOrEqual(2);
    expect(ago + freeIn).toBeGreaterThanOrEqual(10);
    expect(ago + freeIn).toBeLessThanOrEqual(11);
    // Nothing of it was registered.
    expect((await registry.runners.list()).filter((r) => r.hostname === os.hostname())).toHaveLength(2);
    // Under another name it starts.
    const renamed = await runner(root, { ...env, CORRAL_RUNNER_NAME: "gpu-box-2" });
    expect(await renamed.stop()).toBe(0);

    // This machine's own runner, killed and not yet past its lease (and the other one gone): starting again is not refused.
    await registry.runners.markStopped(live, Date.now());
    await registered(os.hostname(), 1000);
    await starts();
  });

  test("a runner killed with SIGKILL has its running job marked lost once past its lease, and another runner lives on", async () => {
    const root = tempDir();
    const url = await postgres.database();
    const corral = await startServer({ CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LEASE_S: "5" }, { root });
    cleanups.push(() => corral.close());
    await api(corral, "PATCH", "/api/agents/kiro", { runnerLabel: "gpu" });
    const doomed = await runner(root, { CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LABELS: "gpu" });
    const survivor = await runner(root, { CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LABELS: "other", CORRAL_DATA_DIR: path.join(root, "data-2") });
    const launched = await api<Job>(corral, "POST", "/api/jobs", { agent: "kiro", prompt: "print 1\nhang", workdir: path.join(root, "w") });
    const running = await until(async () => {
      const job = (await api<Job>(corral, "GET", `/api/jobs/${launched.body.id}`)).body;
      return job.status === "running" ? job : undefined;
    });
    expect(running.runner).toBe(doomed.id);
    // The worker has a process group of its own: it outlives its runner, as on a machine that lost its network.
    cleanups.push(async () => {
      try {
        killGroupOf(running.pid);
      } catch {}
    });
    const killedAt = Date.now();
    await doomed.stop("SIGKILL");
    const [lost] = await corral.services.waits.waitFor([launched.body.id], 15_000);
    expect(lost?.status).toBe("lost");
    expect(lost?.error).toMatch(new RegExp(`runner \\S+ \\(${doomed.id}\\) fell silent: no heartbeat for \\d+ s, past its lease of 5 s`));
    // Not before its lease ran out (the last heartbeat may have come up to 2 s before the kill).
    expect(Date.now() - killedAt).toBeGreaterThan(2500);
    const attempts = await api<{ attempts: JobAttempt[] }>(corral, "GET", `/api/jobs/${launched.body.id}/attempts`);
    expect(attempts.body.attempts).toMatchObject([{ attempt: 1, status: "lost" }]);
    // The dead runner's late write is refused: the job stays lost.
    const registry = await pgRegistryAt(url);
    cleanups.push(() => registry.close());
    expect(await registry.jobs.updateClaimed(launched.body.id, doomed.id, { status: "succeeded" })).toBeUndefined();
    // The other runner kept heartbeating: nothing of it was given up on.
    const alive = await registry.runners.get(survivor.id);
    expect(Date.now() - (alive?.heartbeatAt ?? 0)).toBeLessThan(5000);
    const states = (await api<RunnerList>(corral, "GET", "/api/runners")).body.runners.map((r) => [r.id, r.state, r.activeJobs]);
    // The server's own `local` first (never silent: the lease does not apply to it), then newest first: the survivor started after the doomed one.
    expect(states).toEqual([
      ["local", "running", 0],
      [survivor.id, "running", 0],
      [doomed.id, "silent", 0],
    ]);
  });

  test("a runner that was only paused past its lease comes back to find its job lost, and cannot overwrite that", async () => {
    const root = tempDir();
    const url = await postgres.database();
    const corral = await startServer({ CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LEASE_S: "5" }, { root });
    cleanups.push(() => corral.close());
    await api(corral, "PATCH", "/api/agents/kiro", { runnerLabel: "gpu" });
    const box = await runner(root, { CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LABELS: "gpu" });
    const launched = await api<Job>(corral, "POST", "/api/jobs", { agent: "kiro", prompt: "print 1\nhang", workdir: path.join(root, "w") });
    const running = await until(async () => {
      const job = (await api<Job>(corral, "GET", `/api/jobs/${launched.body.id}`)).body;
      return job.status === "running" ? job : undefined;
    });
    const pid = running.pid as number;
    cleanups.push(async () => {
      try {
        killGroupOf(pid);
      } catch {}
    });
    // Paused (a machine asleep, a network partition): no heartbeats, and it cannot act.
    box.child.kill("SIGSTOP");
    const [lost] = await corral.services.waits.waitFor([launched.body.id], 15_000);
    expect(lost?.status).toBe("lost");
    box.child.kill("SIGCONT");
    // Back, it sees its worker end and tries to store that end: the fence refuses it.
    killGroupOf(pid, "SIGTERM");
    await until(() => {
      try {
        process.kill(pid, 0);
        return undefined;
      } catch {
        return true;
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const after = (await api<Job>(corral, "GET", `/api/jobs/${launched.body.id}`)).body;
    expect(after).toMatchObject({ status: "lost", runner: box.id, error: lost?.error });
    const attempts = await api<{ attempts: JobAttempt[] }>(corral, "GET", `/api/jobs/${launched.body.id}/attempts`);
    expect(attempts.body.attempts).toMatchObject([{ attempt: 1, status: "lost" }]);
    // It is alive again, heartbeating under the same id.
    const registry = await pgRegistryAt(url);
    cleanups.push(() => registry.close());
    await until(
      async () => (Date.now() - ((await registry.runners.get(box.id))?.heartbeatAt ?? 0) < 3000 ? true : undefined),
      6000,
      "a heartbeat again",
    );
  });

  test("a runner back after its job was declared lost, whose worker still runs there, starts no more of that agent's jobs than its maxConcurrent until the worker ends", async () => {
    const root = tempDir();
    const url = await postgres.database();
    const corral = await startServer({ CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LEASE_S: "5" }, { root });
    cleanups.push(() => corral.close());
    expect((await api(corral, "PATCH", "/api/agents/kiro", { runnerLabel: "gpu", maxConcurrent: 1 })).status).toBe(200);
    const box = await runner(root, { CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LABELS: "gpu" });
    const first = await api<Job>(corral, "POST", "/api/jobs", { agent: "kiro", prompt: "hang", workdir: path.join(root, "w1") });
    const running = await until(async () => {
      const job = (await api<Job>(corral, "GET", `/api/jobs/${first.body.id}`)).body;
      return job.status === "running" ? job : undefined;
    });
    const pid = running.pid as number;
    cleanups.push(async () => {
      try {
        killGroupOf(pid);
      } catch {}
    });
    box.child.kill("SIGSTOP");
    const [lost] = await corral.services.waits.waitFor([first.body.id], 15_000);
    expect(lost?.status).toBe("lost");
    // The registry counts the lost job no more: a claim finds room for the next one.
    const second = await api<Job>(corral, "POST", "/api/jobs", { agent: "kiro", prompt: "print 1", workdir: path.join(root, "w2") });
    box.child.kill("SIGCONT");
    await until(
      async () => ((await api<Job>(corral, "GET", `/api/jobs/${second.body.id}`)).body.runner === box.id ? true : undefined),
      15_000,
      "the claim",
    );
    // Claimed, it waits on that machine while the lost job's worker runs there (a claim poll and more).
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(() => process.kill(pid, 0)).not.toThrow();
    expect((await api<Job>(corral, "GET", `/api/jobs/${second.body.id}`)).body).toMatchObject({ status: "queued", runner: box.id, pid: null });
    // The worker ends: the claimed job starts.
    killGroupOf(pid, "SIGTERM");
    const [ran] = await corral.services.waits.waitFor([second.body.id], 20_000);
    expect(ran).toMatchObject({ status: "succeeded", runner: box.id });
  }, 90_000);

  test("output a runner stored while the server was down is there when the job's output is read after it is back", async () => {
    const root = tempDir();
    const url = await postgres.database();
    const first = await startServer({ CORRAL_DATABASE_URL: url }, { root });
    await api(first, "PATCH", "/api/agents/kiro", { runnerLabel: "gpu" });
    await runner(root, { CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LABELS: "gpu" });
    const launched = await api<Job>(first, "POST", "/api/jobs", {
      agent: "kiro",
      prompt: "print 1\nsleep 1.5\nprint 2",
      workdir: path.join(root, "w"),
    });
    await until(async () => ((await api<Job>(first, "GET", `/api/jobs/${launched.body.id}`)).body.status === "running" ? true : undefined));
    await first.close();
    const registry = await pgRegistryAt(url);
    cleanups.push(() => registry.close());
    await until(
      async () => ((await registry.jobs.get(launched.body.id))?.status === "succeeded" ? true : undefined),
      15_000,
      "the job to end on the runner",
    );

    const second = await server(url, root);
    const output = await api<OutputPage>(second, "GET", `/api/jobs/${launched.body.id}/output?cursor=0`);
    expect(output.body.chunks.map((c) => c.text).join("")).toBe("line 1\nline 1\nline 2\ndone kiro-cli-chat\n");
    expect(output.body.complete).toBe(true);
  });
});
