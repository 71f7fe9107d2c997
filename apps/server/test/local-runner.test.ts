// The server is the built-in runner `local`: its jobs are that runner's from their launch, it is
// on the Runners page of every registry, and nothing that watches remote runners treats it as one.
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterEach, describe, expect, test } from "vitest";
import type { Job, RunnerList } from "@corral/shared";
import { loadRunnerSettings } from "../src/runner/settings.js";
import { api, startServer, tempDir, until, type TestServer } from "./helpers.js";
import { usePostgres } from "./postgres.js";
import { pgRegistryAt } from "./test-registry.js";

const postgres = usePostgres();
const closing: TestServer[] = [];
afterEach(async () => {
  for (const server of closing.splice(0)) await server.close();
});

async function start(env: Record<string, string> = {}, root = tempDir()): Promise<TestServer> {
  const server = await startServer(env, { root });
  closing.push(server);
  return server;
}

const runningNow = (server: TestServer, id: string) =>
  until(async () => ((await api<Job>(server, "GET", `/api/jobs/${id}`)).body.status === "running" ? true : undefined), 15_000, `job ${id} running`);

const launch = async (server: TestServer, prompt: string, workdir: string) => {
  const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "kiro", prompt, workdir });
  expect(launched.status).toBe(201);
  return launched.body;
};

test("every job the server runs is runner local's, from its launch through each state; local heads the Runners page", async () => {
  const root = tempDir();
  const server = await start({}, root);
  const runners = await api<RunnerList>(server, "GET", "/api/runners");
  expect(runners.status).toBe(200);
  expect(runners.body.runners[0]).toMatchObject({ id: "local", name: "local", labels: [], state: "running", activeJobs: 0, stoppedAt: null });
  expect(runners.body.runners[0]?.version).toMatch(/^\d+\.\d+\.\d+/);

  await api(server, "PATCH", "/api/agents/kiro", { maxConcurrent: 1 });
  const running = await launch(server, "sleep 20", path.join(root, "a"));
  const queued = await launch(server, "print 1", path.join(root, "b"));
  // Queued behind the first: already the server's.
  expect(queued).toMatchObject({ status: "queued", runner: "local" });
  await runningNow(server, running.id);
  expect((await api<Job>(server, "GET", `/api/jobs/${running.id}`)).body).toMatchObject({ status: "running", runner: "local" });
  const held = await api<RunnerList>(server, "GET", "/api/runners");
  expect(held.body.runners.find((r) => r.id === "local")?.activeJobs).toBe(2);

  // Ended each way: cancelled while running, then the queued one runs to its end.
  await api(server, "POST", `/api/jobs/${running.id}/cancel`);
  const [ended] = await server.services.waits.waitFor([queued.id], 15_000);
  expect(ended).toMatchObject({ status: "succeeded", runner: "local" });
  expect((await api<Job>(server, "GET", `/api/jobs/${running.id}`)).body).toMatchObject({ status: "cancelled", runner: "local" });
  const cancelledQueued = await launch(server, "sleep 20", path.join(root, "c"));
  const waiting = await launch(server, "print 2", path.join(root, "d"));
  await api(server, "POST", `/api/jobs/${waiting.id}/cancel`);
  expect((await api<Job>(server, "GET", `/api/jobs/${waiting.id}`)).body).toMatchObject({ status: "cancelled", runner: "local", startedAt: null });
  await api(server, "POST", `/api/jobs/${cancelledQueued.id}/cancel`);
  expect((await api<RunnerList>(server, "GET", "/api/runners")).body.runners.find((r) => r.id === "local")?.activeJobs).toBe(0);
});

test("local is registered again at each start, one row, with the new start's time", async () => {
  const root = tempDir();
  const first = await start({}, root);
  const before = (await api<RunnerList>(first, "GET", "/api/runners")).body.runners.find((r) => r.id === "local");
  await first.close();
  closing.splice(closing.indexOf(first), 1);
  const second = await start({}, root);
  const after = (await api<RunnerList>(second, "GET", "/api/runners")).body.runners.filter((r) => r.id === "local");
  expect(after).toHaveLength(1);
  expect(after[0]?.startedAt).toBeGreaterThanOrEqual(before?.startedAt ?? Number.POSITIVE_INFINITY);
});

test("local is no label an agent may ask for, and no name a runner may take", async () => {
  const server = await start();
  const asked = await api<{ field: string; error: string }>(server, "PATCH", "/api/agents/kiro", { runnerLabel: "local" });
  expect(asked.status).toBe(400);
  expect(asked.body.field).toBe("runnerLabel");
  expect(asked.body.error).toMatch(/the server itself.*leave the runner label empty/);
  const env = { CORRAL_DATABASE_URL: "postgres://u@localhost/db", HOME: tempDir() };
  expect(() => loadRunnerSettings({ ...env, CORRAL_RUNNER_NAME: "Local" })).toThrow(/CORRAL_RUNNER_NAME: "Local" is the server's own runner/);
  expect(() => loadRunnerSettings({ ...env, CORRAL_RUNNER_LABELS: "gpu,local" })).toThrow(/CORRAL_RUNNER_LABELS: "local" is not a label/);
  // A machine named local: its name and labels would default to it, so both are asked for.
  expect(() => loadRunnerSettings(env, "Local")).toThrow(
    /hostname is "Local", the name of the server's own runner.*set CORRAL_RUNNER_NAME and CORRAL_RUNNER_LABELS/,
  );
  expect(loadRunnerSettings({ ...env, CORRAL_RUNNER_NAME: "box", CORRAL_RUNNER_LABELS: "gpu" }, "local")).toMatchObject({
    name: "box",
    labels: ["gpu"],
  });
});

describe.skipIf(!postgres.available)("on a PostgreSQL registry", () => {
  test("runners' lease never applies to local: its running job survives a sweep long after its start", async () => {
    const root = tempDir();
    const server = await start({ CORRAL_DATABASE_URL: await postgres.database() }, root);
    const running = await launch(server, "sleep 20", path.join(root, "a"));
    await runningNow(server, running.id);
    // As the sweep would see it an hour from now: local's row was never heartbeat since the start.
    expect(await server.services.remoteJobs.loseJobsOfSilentRunners(6000, Date.now() + 3_600_000)).toBe(0);
    expect((await api<Job>(server, "GET", `/api/jobs/${running.id}`)).body).toMatchObject({ status: "running", runner: "local" });
    await api(server, "POST", `/api/jobs/${running.id}/cancel`);
  });

  test("the upgrade gives the server's earlier jobs to local and leaves jobs waiting for a runner unclaimed", async () => {
    const url = await postgres.database();
    // Every migration up to this one, as the last release left the registry.
    const registry = await pgRegistryAt(url);
    await registry.close();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(`insert into agents (name, kind, provider, workdir, timeout_s, max_concurrent, env, enabled, command, args, builtin, runner_label, created_at, updated_at)
        values ('plain', 'command', 'local', '/tmp', 60, 1, '{}', true, 'true', '[]', false, null, 0, 0),
               ('gpu_agent', 'command', 'local', '/tmp', 60, 1, '{}', true, 'true', '[]', false, 'gpu', 0, 0)`);
      const job = (id: string, agent: string, status: string, runner: string | null) =>
        client.query(
          `insert into jobs (id, agent, status, prompt, workdir, timeout_s, origin, runner, created_at) values ($1, $2, $3, 'p', '/tmp', 60, 'rest', $4, 0)`,
          [id, agent, status, runner],
        );
      await job("ended000001", "plain", "succeeded", null);
      await job("ended000002", "gpu_agent", "failed", null);
      // It ran (here, before its agent was given a label): a job that never started stays unclaimed.
      await client.query("update jobs set started_at = 1 where id = 'ended000002'");
      await job("queued00001", "plain", "queued", null);
      await job("waiting0001", "gpu_agent", "queued", null);
      await job("remote00001", "gpu_agent", "running", "box-1234");
      const migration = readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../drizzle-pg/0005_local_runner.sql"), "utf8");
      await client.query(migration);
      const { rows } = await client.query<{ id: string; runner: string | null }>("select id, runner from jobs order by id");
      expect(Object.fromEntries(rows.map((r) => [r.id, r.runner]))).toEqual({
        ended000001: "local",
        ended000002: "local",
        queued00001: "local",
        waiting0001: null,
        remote00001: "box-1234",
      });
    } finally {
      await client.end();
    }
  });
});
