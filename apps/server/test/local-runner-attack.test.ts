// Review of "the server is the built-in runner local": defects found by attacking it, each as the
// exact reproduction that failed before its fix.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import type { Job } from "@corral/shared";
import type { Registry } from "../src/db/registry.js";
import { api, sleep, startServer, tempDir, until, type TestServer } from "./helpers.js";
import { usePostgres } from "./postgres.js";
import { startRunnerProcess, type RunnerProcess } from "./runner-process.js";
import { pgRegistryAt } from "./test-registry.js";
import { agentRow, jobRow } from "../src/db/registry-contract/rows.js";
import { RunnerWorkdirs } from "../src/workdirs/on-runners.js";

const postgres = usePostgres();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(env: Record<string, string>, root = tempDir()): Promise<TestServer> {
  const server = await startServer(env, { root });
  cleanups.push(() => server.close());
  return server;
}

async function runner(root: string, env: Record<string, string>): Promise<RunnerProcess> {
  const started = await startRunnerProcess(root, env);
  cleanups.push(() => started.stop("SIGKILL"));
  return started;
}

const job = async (server: TestServer, id: string) => (await api<Job>(server, "GET", `/api/jobs/${id}`)).body;
const until200 = (server: TestServer, id: string, ok: (j: Job) => boolean, what: string, ms = 15_000) =>
  until(async () => ((await job(server, id)) && ok(await job(server, id)) ? true : undefined), ms, what);

/** The registry the server's job engine reads and writes (to hold one of its statements back). */
const registryOf = (server: TestServer) => (server.services.jobEngine as unknown as { deps: { registry: Registry } }).deps.registry;

describe.skipIf(!postgres.available)("on a PostgreSQL registry", () => {
  test("a label given then removed at once leaves no job stranded with no runner (followRunnerLabel's release landing after the take)", async () => {
    const root = tempDir();
    const server = await start({ CORRAL_DATABASE_URL: await postgres.database() }, root);
    await api(server, "PATCH", "/api/agents/kiro", { maxConcurrent: 1 });
    const first = (await api<Job>(server, "POST", "/api/jobs", { agent: "kiro", prompt: "sleep 2", workdir: path.join(root, "a") })).body;
    const second = (await api<Job>(server, "POST", "/api/jobs", { agent: "kiro", prompt: "print 1", workdir: path.join(root, "b") })).body;
    expect(second).toMatchObject({ status: "queued", runner: "local" });
    await until200(server, first.id, (j) => j.status === "running", "the first job running");

    // The release of the first change reaches PostgreSQL after the second change's take: two
    // PATCHes a few ms apart (two tabs, a script, a config file saved twice), a slow connection.
    const runners = registryOf(server).runners;
    const release = runners.releaseQueued.bind(runners);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    runners.releaseQueued = async (...args: Parameters<typeof release>) => {
      await gate;
      return release(...args);
    };
    expect((await api(server, "PATCH", "/api/agents/kiro", { runnerLabel: "gpu" })).status).toBe(200);
    expect((await api(server, "PATCH", "/api/agents/kiro", { runnerLabel: null })).status).toBe(200);
    await sleep(300);
    open();

    // The agent has no label: its job must run here once the first one ends.
    const [ended] = await server.services.waits.waitFor([second.id], 15_000);
    expect(ended).toMatchObject({ status: "succeeded", runner: "local" });
  });

  test("a job waiting out its retry backoff when its agent is given a label finishes its attempts here, and a cancel ends it", async () => {
    const root = tempDir();
    const url = await postgres.database();
    const server = await start({ CORRAL_DATABASE_URL: url }, root);
    const marker = path.join(root, "failed-once");
    const launched = await api<Job>(server, "POST", "/api/jobs", {
      agent: "kiro",
      prompt: `fail-once ${marker} 75 transient\nsleep 6\nprint 1`,
      workdir: path.join(root, "w"),
      retry: { maxAttempts: 2, exitCodes: [75], backoffS: 3600 },
    });
    expect(launched.status).toBe(201);
    const id = launched.body.id;
    // Attempt 1 failed here; the job waits out its backoff, local's.
    await until200(server, id, (j) => j.status === "queued" && j.attempt === 2, "the job waiting to retry");
    expect(await job(server, id)).toMatchObject({ runner: "local" });

    const box = await runner(root, { CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LABELS: "gpu" });
    expect((await api(server, "PATCH", "/api/agents/kiro", { runnerLabel: "gpu" })).status).toBe(200);
    // A retry stays where it ran (as a runner's does): the runner does not take it, and its backoff holds.
    await sleep(2500);
    expect(await job(server, id)).toMatchObject({ status: "queued", attempt: 2, runner: "local" });

    const cancelled = await api<Job>(server, "POST", `/api/jobs/${id}/cancel`);
    expect(cancelled.body).toMatchObject({ status: "cancelled", runner: "local" });
    expect((await api<{ chunks: { text: string }[] }>(server, "GET", `/api/jobs/${id}/output`)).body.chunks.map((c) => c.text).join("")).not.toMatch(
      /done kiro/,
    );
    expect(
      (await api<{ runners: { id: string; activeJobs: number }[] }>(server, "GET", "/api/runners")).body.runners.find((r) => r.id === box.id),
    ).toMatchObject({
      activeJobs: 0,
    });
  });

  test("a label removed from the config file while the server was down: the waiting job runs once, its worker started once", async () => {
    const root = tempDir();
    const dataDir = path.join(root, "data");
    mkdirSync(dataDir, { recursive: true });
    const file = path.join(dataDir, "corral.yaml");
    writeFileSync(file, "agents:\n  gpuk:\n    provider: kiro\n    runnerLabel: gpu\n");
    const env = { CORRAL_DATABASE_URL: await postgres.database() };
    const first = await startServer(env, { root, dataDir });
    const launched = await api<Job>(first, "POST", "/api/jobs", {
      agent: "gpuk",
      prompt: "append hits.txt x\nsleep 1",
      workdir: path.join(root, "w"),
    });
    expect(launched.body).toMatchObject({ status: "queued", runner: null });
    await first.close();
    writeFileSync(file, "agents:\n  gpuk:\n    provider: kiro\n");
    const again = await startServer(env, { root, dataDir });
    cleanups.push(() => again.close());
    const [ended] = await again.services.waits.waitFor([launched.body.id], 15_000);
    expect(ended).toMatchObject({ status: "succeeded", runner: "local" });
    await sleep(500);
    expect(readFileSync(path.join(root, "w", "hits.txt"), "utf8")).toBe("x\n");
    expect((await api<{ attempts: unknown[] }>(again, "GET", `/api/jobs/${launched.body.id}/attempts`)).body.attempts).toHaveLength(1);
  });

  test("a label removed while a runner runs the agent's job: the server keeps to maxConcurrent across both", async () => {
    const root = tempDir();
    const url = await postgres.database();
    const server = await start({ CORRAL_DATABASE_URL: url }, root);
    await api(server, "PATCH", "/api/agents/kiro", { maxConcurrent: 1, runnerLabel: "gpu" });
    const box = await runner(root, { CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LABELS: "gpu" });
    const a = (await api<Job>(server, "POST", "/api/jobs", { agent: "kiro", prompt: "sleep 6", workdir: path.join(root, "a") })).body;
    await until200(server, a.id, (j) => j.status === "running" && j.runner === box.id, "the first job running on the runner");
    const b = (await api<Job>(server, "POST", "/api/jobs", { agent: "kiro", prompt: "print 1", workdir: path.join(root, "b") })).body;
    await sleep(500);
    expect(await job(server, b.id)).toMatchObject({ status: "queued", runner: null });

    expect((await api(server, "PATCH", "/api/agents/kiro", { runnerLabel: null })).status).toBe(200);
    await sleep(2000);
    // maxConcurrent 1 "holds across all runners and the server" (docs/runners.md): b waits for a to end.
    expect((await job(server, a.id)).status).toBe("running");
    expect(await job(server, b.id)).toMatchObject({ status: "queued", startedAt: null });
    // Once a ends on the runner, the server hears it and starts b at once.
    const [ranB] = await server.services.waits.waitFor([b.id], 20_000);
    expect(ranB).toMatchObject({ status: "succeeded", runner: "local" });
    expect(ranB?.startedAt).toBeGreaterThanOrEqual((await job(server, a.id)).endedAt ?? Number.POSITIVE_INFINITY);
  });

  test("the upgrade leaves a job that waited for a runner and was cancelled before any claimed it unclaimed, as this version stores it", async () => {
    const registry = await pgRegistryAt(await postgres.database());
    cleanups.push(() => registry.close());
    await registry.agents.insertMissing([agentRow("gpu_agent", { runnerLabel: "gpu" })]);
    await registry.runners.register({
      id: "box-1",
      name: "box",
      labels: ["gpu"],
      hostname: "h",
      version: "0",
      startedAt: 1,
      heartbeatAt: Date.now(),
      stoppedAt: null,
    });
    // As the last release left them: one ran on a runner, the next was cancelled while it waited for one.
    await registry.insertJobs([
      jobRow("ranonbox001", { agent: "gpu_agent", workdir: "/w/x", status: "succeeded", runner: "box-1", startedAt: 1 }),
      jobRow("neverran001", { agent: "gpu_agent", workdir: "/w/x", status: "cancelled", runner: null, startedAt: null }),
    ]);
    const migration = readFileSync(
      path.resolve(path.dirname(new URL(import.meta.url).pathname), "../../../drizzle-pg/0005_local_runner.sql"),
      "utf8",
    );
    await registry.run(migration);
    // Never run anywhere: this version stores such a job with runner null (cancel leaves it), never local.
    expect((await registry.jobs.get("neverran001"))?.runner).toBeNull();
    // So its workdir is still browsed on the runner that ran the last job there, not on the server's disk.
    const onRunners = new RunnerWorkdirs(registry, { homeDir: "/home/me", leaseMs: 15_000, answerTimeoutMs: 2000 });
    expect(await onRunners.holding("/w/x/out.txt")).toMatchObject({ path: "/w/x", runnerId: "box-1" });
  });

  test("a retry when its agent is given a label runs where its first attempt did: its attempts' output ranges are cursors of the job's one output", async () => {
    const root = tempDir();
    const url = await postgres.database();
    const server = await start({ CORRAL_DATABASE_URL: url }, root);
    const marker = path.join(root, "failed-once");
    const id = (
      await api<Job>(server, "POST", "/api/jobs", {
        agent: "kiro",
        prompt: `print 3\nfail-once ${marker} 75 transient\nprint 2`,
        workdir: path.join(root, "w"),
        retry: { maxAttempts: 2, exitCodes: [75], backoffS: 1 },
      })
    ).body.id;
    await until200(server, id, (j) => j.status === "queued" && j.attempt === 2, "the job waiting to retry");
    await runner(root, { CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LABELS: "gpu" });
    await api(server, "PATCH", "/api/agents/kiro", { runnerLabel: "gpu" });
    // Its retry stays where it ran: one log, so its attempts' ranges are cursors of it.
    const [ended] = await server.services.waits.waitFor([id], 20_000);
    expect(ended).toMatchObject({ status: "succeeded", runner: "local", attempt: 2 });
    const attempts = (
      await api<{ attempts: { attempt: number; outputStart: number; outputEnd: number | null }[] }>(server, "GET", `/api/jobs/${id}/attempts`)
    ).body.attempts;
    const output = (await api<{ cursor: number }>(server, "GET", `/api/jobs/${id}/output?limit=1000000`)).body;
    expect(attempts).toHaveLength(2);
    // The second attempt's output comes after the first's in the job's output, and ends at its end.
    expect(attempts[1]!.outputStart).toBeGreaterThanOrEqual(attempts[0]!.outputEnd ?? Number.POSITIVE_INFINITY);
    expect(attempts[1]!.outputEnd).toBe(output.cursor);
  });

  test("a label given while a job is starting here (its workdir being snapshotted): the server's slot is given back, and the job runs once the label is removed", async () => {
    const root = tempDir();
    const server = await start({ CORRAL_DATABASE_URL: await postgres.database() }, root);
    await api(server, "PATCH", "/api/agents/kiro", { maxConcurrent: 1 });
    // The start pauses where a big workdir's snapshot takes its time (between admission and the running state).
    const hooks = (server.services.jobEngine as unknown as { deps: { hooks: { starting: (row: unknown) => Promise<void> } } }).deps.hooks;
    const starting = hooks.starting.bind(hooks);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let paused = false;
    hooks.starting = async (row) => {
      paused = true;
      await gate;
      return starting(row);
    };
    const a = (await api<Job>(server, "POST", "/api/jobs", { agent: "kiro", prompt: "print 1", workdir: path.join(root, "a") })).body;
    await until(() => (paused ? true : undefined), 10_000, "the start paused");
    expect((await api(server, "PATCH", "/api/agents/kiro", { runnerLabel: "gpu" })).status).toBe(200);
    await until200(server, a.id, (j) => j.runner === null, "the job given to the runners");
    open();
    await sleep(1000);
    expect(await job(server, a.id)).toMatchObject({ status: "queued", runner: null });
    // Back to the server: maxConcurrent 1 and nothing running here, so it runs.
    expect((await api(server, "PATCH", "/api/agents/kiro", { runnerLabel: null })).status).toBe(200);
    const [ended] = await server.services.waits.waitFor([a.id], 10_000);
    expect(ended).toMatchObject({ status: "succeeded", runner: "local" });
  });

  test("a job a silent runner held for its retry, of an agent whose label was removed meanwhile, is taken by local when the lease gives it back", async () => {
    const root = tempDir();
    const url = await postgres.database();
    const server = await start({ CORRAL_DATABASE_URL: url }, root);
    await api(server, "PATCH", "/api/agents/kiro", { runnerLabel: "gpu" });
    const box = await runner(root, { CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LABELS: "gpu" });
    const marker = path.join(root, "failed-once");
    const id = (
      await api<Job>(server, "POST", "/api/jobs", {
        agent: "kiro",
        prompt: `fail-once ${marker} 75 transient\nprint 1`,
        workdir: path.join(root, "w"),
        retry: { maxAttempts: 2, exitCodes: [75], backoffS: 3600 },
      })
    ).body.id;
    // Attempt 1 failed on the runner, which holds the job for its retry.
    await until200(server, id, (j) => j.status === "queued" && j.attempt === 2 && j.runner === box.id, "the job waiting to retry on the runner");
    expect((await api(server, "PATCH", "/api/agents/kiro", { runnerLabel: null })).status).toBe(200);
    await sleep(300);
    expect((await job(server, id)).runner).toBe(box.id);
    await box.stop("SIGKILL");
    // The lease runs out (as the sweep sees it a minute on): the job is given back; the agent has no label, so it is local's.
    await server.services.remoteJobs.loseJobsOfSilentRunners(15_000, Date.now() + 60_000);
    const [ended] = await server.services.waits.waitFor([id], 10_000);
    expect(ended).toMatchObject({ status: "succeeded", runner: "local" });
  });

  test("a job a stopping runner held for its retry, of an agent whose label was removed meanwhile, is taken by local when the runner gives it back", async () => {
    const root = tempDir();
    const url = await postgres.database();
    const server = await start({ CORRAL_DATABASE_URL: url }, root);
    await api(server, "PATCH", "/api/agents/kiro", { runnerLabel: "gpu" });
    const box = await runner(root, { CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LABELS: "gpu" });
    const marker = path.join(root, "failed-once");
    const id = (
      await api<Job>(server, "POST", "/api/jobs", {
        agent: "kiro",
        prompt: `fail-once ${marker} 75 transient\nprint 1`,
        workdir: path.join(root, "w"),
        retry: { maxAttempts: 2, exitCodes: [75], backoffS: 3600 },
      })
    ).body.id;
    await until200(server, id, (j) => j.status === "queued" && j.attempt === 2 && j.runner === box.id, "the job waiting to retry on the runner");
    expect((await api(server, "PATCH", "/api/agents/kiro", { runnerLabel: null })).status).toBe(200);
    // Stopped cleanly (SIGTERM): it gives back the jobs it holds but does not run.
    expect(await box.stop("SIGTERM")).toBe(0);
    const [ended] = await server.services.waits.waitFor([id], 10_000);
    expect(ended).toMatchObject({ status: "succeeded", runner: "local" });
  });
});
