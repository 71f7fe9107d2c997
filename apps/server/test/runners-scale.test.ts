// Runners at work, as a user of several machines relies on them: a launch reaches a runner at once
// (NOTIFY corral_queue), each job runs on a runner with its agent's label and nowhere else, and a
// remote job's output reaches a WebSocket subscriber whole. Real server, real runner processes, the
// test run's PostgreSQL.
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import type { Job } from "@corral/shared";
import { api, startServer, tempDir, type TestServer } from "./helpers.js";
import { usePostgres } from "./postgres.js";
import { failedRunnerStart, startRunnerProcess, type RunnerProcess } from "./runner-process.js";

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

async function launch(corral: TestServer, agent: string, prompt: string, workdir: string): Promise<Job> {
  const launched = await api<Job>(corral, "POST", "/api/jobs", { agent, prompt, workdir, sharedWorkdir: true });
  expect(launched.status).toBe(201);
  return launched.body;
}

test("corral runner refuses a fallback poll that is not a whole number of milliseconds, saying what to give", async () => {
  const { code, stderr } = await failedRunnerStart(tempDir(), { CORRAL_DATABASE_URL: "postgres://127.0.0.1:1/x", CORRAL_RUNNER_POLL_MS: "2s" });
  expect(code).toBe(1);
  expect(stderr).toMatch(/CORRAL_RUNNER_POLL_MS: "2s" is not a whole number of milliseconds from 100 to 3600000/);
});

describe.skipIf(!postgres.available)("runners at scale", () => {
  test("a launch reaches a runner at once (NOTIFY corral_queue), not at its next poll; so does a label given to an agent", async () => {
    const root = tempDir();
    const url = await postgres.database();
    const corral = await server(url, root);
    await api(corral, "PATCH", "/api/agents/kiro", { runnerLabel: "gpu" });
    // Its fallback poll comes once a minute, first a minute after it started: only the NOTIFY can start a job sooner.
    const box = await runner(root, { CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LABELS: "gpu", CORRAL_RUNNER_POLL_MS: "60000" });
    const job = await launch(corral, "kiro", "print 1", path.join(root, "w"));
    const [ended] = await corral.services.jobs.waitFor([job.id], 20_000);
    expect(ended).toMatchObject({ status: "succeeded", runner: box.id });

    // Queued for a label no runner has, it waits; given the runner's label, it is claimed at once.
    await api(corral, "PATCH", "/api/agents/kiro", { runnerLabel: "nowhere" });
    const waiting = await launch(corral, "kiro", "print 1", path.join(root, "w"));
    expect((await api<Job>(corral, "GET", `/api/jobs/${waiting.id}`)).body).toMatchObject({ status: "queued", runner: null });
    await api(corral, "PATCH", "/api/agents/kiro", { runnerLabel: "gpu" });
    const [moved] = await corral.services.jobs.waitFor([waiting.id], 20_000);
    expect(moved).toMatchObject({ status: "succeeded", runner: box.id });
  }, 60_000);
});
