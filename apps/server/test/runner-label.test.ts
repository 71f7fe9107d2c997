// Agents with a runner label: their jobs wait in the registry for a `corral runner`, never started
// by the server (tested without any runner: the job must stay queued, across a restart too).
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import type { Agent, Job } from "@corral/shared";
import { api, sleep, startServer, tempDir, until, type TestServer } from "./helpers.js";
import { registryOnPostgres, usePostgres } from "./postgres.js";
import { pgRegistryAt } from "./test-registry.js";

const postgres = usePostgres();
const closing: TestServer[] = [];
afterEach(async () => {
  for (const server of closing.splice(0)) await server.close();
});

async function start(env: Record<string, string>, root = tempDir()): Promise<TestServer> {
  const server = await startServer(env, { root });
  closing.push(server);
  return server;
}

test.skipIf(registryOnPostgres)("a runner label is refused on a SQLite registry, naming the field and what to do", async () => {
  const server = await start({});
  const created = await api<{ field: string; error: string }>(server, "POST", "/api/agents", { name: "gpu_box", kind: "kiro", runnerLabel: "gpu" });
  expect(created.status).toBe(400);
  expect(created.body.field).toBe("runnerLabel");
  expect(created.body.error).toMatch(/PostgreSQL.*CORRAL_DATABASE_URL/);
  const patched = await api<{ field: string }>(server, "PATCH", "/api/agents/kiro", { runnerLabel: "gpu" });
  expect(patched).toMatchObject({ status: 400, body: { field: "runnerLabel" } });
  // Clearing it is always allowed.
  expect((await api(server, "PATCH", "/api/agents/kiro", { runnerLabel: null })).status).toBe(200);
});

describe.skipIf(!postgres.available)("on a PostgreSQL registry", () => {
  test("a label is checked, stored and shown; the agent's jobs stay queued for a runner, through a restart", async () => {
    const root = tempDir();
    const env = { CORRAL_DATABASE_URL: await postgres.database() };
    const first = await start(env, root);
    const bad = await api<{ field: string }>(first, "PATCH", "/api/agents/kiro", { runnerLabel: "GPU box" });
    expect(bad).toMatchObject({ status: 400, body: { field: "runnerLabel" } });
    const labelled = await api<Agent>(first, "PATCH", "/api/agents/kiro", { runnerLabel: "gpu" });
    expect(labelled).toMatchObject({ status: 200, body: { runnerLabel: "gpu" } });

    const launched = await api<Job>(first, "POST", "/api/jobs", { agent: "kiro", prompt: "print 1", workdir: path.join(root, "w") });
    expect(launched).toMatchObject({ status: 201, body: { status: "queued", runner: null } });
    // A job of an agent without a label still runs here, beside it.
    const local = await api<Job>(first, "POST", "/api/jobs", { agent: "claude", prompt: "hello", workdir: path.join(root, "c") });
    const [ran] = await first.services.waits.waitFor([local.body.id], 15_000);
    expect(ran?.status).toBe("succeeded");
    await sleep(300);
    expect((await api<Job>(first, "GET", `/api/jobs/${launched.body.id}`)).body).toMatchObject({ status: "queued", runner: null, startedAt: null });
    // It takes no room in the server's own queue.
    expect(first.services.jobEngine.queuedCount()).toBe(0);
    await first.close();

    const second = await start(env, root);
    await sleep(300);
    expect((await api<Job>(second, "GET", `/api/jobs/${launched.body.id}`)).body).toMatchObject({ status: "queued", runner: null });
    expect((await api<Agent>(second, "GET", "/api/agents/kiro")).body.runnerLabel).toBe("gpu");
  });

  test("a label removed gives the server the jobs that waited for a runner, at once; a label given leaves the jobs waiting here to runners", async () => {
    const root = tempDir();
    const server = await start({ CORRAL_DATABASE_URL: await postgres.database() }, root);
    await api(server, "PATCH", "/api/agents/kiro", { runnerLabel: "gpu" });
    const waiting = await api<Job>(server, "POST", "/api/jobs", { agent: "kiro", prompt: "print 1", workdir: path.join(root, "w") });
    await sleep(300);
    expect((await api<Job>(server, "GET", `/api/jobs/${waiting.body.id}`)).body.status).toBe("queued");
    expect((await api<Agent>(server, "PATCH", "/api/agents/kiro", { runnerLabel: null })).status).toBe(200);
    const [ran] = await server.services.waits.waitFor([waiting.body.id], 15_000);
    expect(ran).toMatchObject({ status: "succeeded", runner: "local" });

    // One at a time: the second job waits in the server's own queue (its runner `local`'s) when the agent gets its label.
    await api(server, "PATCH", "/api/agents/kiro", { maxConcurrent: 1 });
    const first = await api<Job>(server, "POST", "/api/jobs", { agent: "kiro", prompt: "sleep 2", workdir: path.join(root, "a") });
    const second = await api<Job>(server, "POST", "/api/jobs", { agent: "kiro", prompt: "print 2", workdir: path.join(root, "b") });
    expect(second.body).toMatchObject({ status: "queued", runner: "local" });
    await until(
      async () => ((await api<Job>(server, "GET", `/api/jobs/${first.body.id}`)).body.status === "running" ? true : undefined),
      10_000,
      "the first job running",
    );
    await api(server, "PATCH", "/api/agents/kiro", { runnerLabel: "gpu" });
    // Given to the runners at once, without waiting for a slot here; the running job stays the server's.
    let given = (await api<Job>(server, "GET", `/api/jobs/${second.body.id}`)).body;
    for (let i = 0; i < 50 && given.runner !== null; i++) {
      await sleep(100);
      given = (await api<Job>(server, "GET", `/api/jobs/${second.body.id}`)).body;
    }
    expect(given).toMatchObject({ status: "queued", runner: null, startedAt: null });
    // The row is given back in PostgreSQL a moment before the server's queue hears of the answer (one round trip).
    await until(async () => (server.services.jobEngine.queuedCount() === 0 ? true : undefined), 5_000, "the server's queue empty");
    expect((await api<Job>(server, "GET", `/api/jobs/${first.body.id}`)).body).toMatchObject({ status: "running", runner: "local" });
    await server.services.cancels.cancel(first.body.id);
    await sleep(500);
    expect((await api<Job>(server, "GET", `/api/jobs/${second.body.id}`)).body).toMatchObject({ status: "queued", runner: null, startedAt: null });
  });

  test("at start the server leaves a runner's running job to its runner instead of calling it lost", async () => {
    const root = tempDir();
    const env = { CORRAL_DATABASE_URL: await postgres.database() };
    const first = await start(env, root);
    const job = await api<Job>(first, "POST", "/api/jobs", { agent: "kiro", prompt: "sleep 5", workdir: path.join(root, "w") });
    await first.services.cancels.cancel(job.body.id);
    // As a runner's job looks: running, claimed by a runner, its worker on another machine (no pid here).
    const registry = await pgRegistryAt(env.CORRAL_DATABASE_URL);
    await registry.jobs.update(job.body.id, { status: "running", runner: "r-elsewhere", endedAt: null, pid: null, error: null });
    await registry.close();
    await first.close();

    const second = await start(env, root);
    await sleep(500);
    expect((await api<Job>(second, "GET", `/api/jobs/${job.body.id}`)).body).toMatchObject({ status: "running", runner: "r-elsewhere" });
  });
});
