// Runners at work, as a user of several machines relies on them: a launch reaches a runner at once
// (NOTIFY corral_queue), each job runs on a runner with its agent's label and nowhere else, and a
// remote job's output reaches a WebSocket subscriber whole. Real server, real runner processes, the
// test run's PostgreSQL.
import { existsSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import type { Agent, Job, JobAttempt, OutputPage } from "@corral/shared";
import { api, startServer, tempDir, type TestServer } from "./helpers.js";
import { usePostgres } from "./postgres.js";
import { failedRunnerStart, startRunnerProcess, type RunnerProcess } from "./runner-process.js";
import { pgRegistryAt } from "./test-registry.js";
import { WsClient } from "./ws-client.js";

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

/** An agent whose worker is `sh -c <prompt>`, run by runners labelled `label`. */
async function shellAgent(corral: TestServer, name: string, label: string): Promise<void> {
  const created = await api<Agent>(corral, "POST", "/api/agents", {
    name,
    kind: "command",
    command: "/bin/sh",
    args: ["-c", "{prompt}"],
    runnerLabel: label,
    maxConcurrent: 4,
  });
  expect(created.status).toBe(201);
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
  test("a launch reaches a runner at once (NOTIFY corral_queue), not at its next poll; so do a label given to an agent and a claim given back", async () => {
    const root = tempDir();
    const url = await postgres.database();
    const corral = await server(url, root);
    await api(corral, "PATCH", "/api/agents/kiro", { runnerLabel: "gpu" });
    // Its fallback poll comes once a minute, first a minute after it started: only the NOTIFY can start a job sooner.
    const box = await runner(root, { CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LABELS: "gpu", CORRAL_RUNNER_POLL_MS: "60000" });
    const job = await launch(corral, "kiro", "print 1", path.join(root, "w"));
    const [ended] = await corral.services.waits.waitFor([job.id], 20_000);
    expect(ended).toMatchObject({ status: "succeeded", runner: box.id });

    // Queued for a label no runner has, it waits; given the runner's label, it is claimed at once.
    await api(corral, "PATCH", "/api/agents/kiro", { runnerLabel: "nowhere" });
    const waiting = await launch(corral, "kiro", "print 1", path.join(root, "w"));
    expect((await api<Job>(corral, "GET", `/api/jobs/${waiting.id}`)).body).toMatchObject({ status: "queued", runner: null });
    await api(corral, "PATCH", "/api/agents/kiro", { runnerLabel: "gpu" });
    const [moved] = await corral.services.waits.waitFor([waiting.id], 20_000);
    expect(moved).toMatchObject({ status: "succeeded", runner: box.id });

    // Claimed by a runner that never started it, then given back (it stopped, or fell silent past its lease): claimed again at once.
    const registry = await pgRegistryAt(url);
    cleanups.push(() => registry.close());
    const now = Date.now();
    await registry.runners.register({
      id: "ghost-1",
      name: "ghost",
      labels: ["elsewhere"],
      hostname: "ghost",
      version: "0",
      startedAt: now,
      heartbeatAt: now,
      stoppedAt: null,
    });
    await api(corral, "PATCH", "/api/agents/kiro", { runnerLabel: "elsewhere" });
    const handed = await launch(corral, "kiro", "print 1", path.join(root, "w"));
    expect((await registry.transaction((tx) => tx.runners.claim("ghost-1", ["elsewhere"]))).job?.id).toBe(handed.id);
    await api(corral, "PATCH", "/api/agents/kiro", { runnerLabel: "gpu" });
    expect((await api<Job>(corral, "GET", `/api/jobs/${handed.id}`)).body).toMatchObject({ status: "queued", runner: "ghost-1" });
    expect(await registry.runners.releaseQueued("ghost-1")).toMatchObject([{ id: handed.id, runner: null }]);
    const [again] = await corral.services.waits.waitFor([handed.id], 20_000);
    expect(again).toMatchObject({ status: "succeeded", runner: box.id });
  }, 90_000);

  test("each agent's jobs run on the runner with its label and never on the other", async () => {
    const root = tempDir();
    const url = await postgres.database();
    const corral = await server(url, root);
    await shellAgent(corral, "render", "gpu");
    await shellAgent(corral, "review", "codex");
    const gpuData = path.join(root, "gpu-data");
    const codexData = path.join(root, "codex-data");
    const [gpu, codex] = await Promise.all([
      runner(root, { CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LABELS: "gpu", CORRAL_RUNNER_NAME: "gpu-box", CORRAL_DATA_DIR: gpuData }),
      runner(root, { CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LABELS: "codex", CORRAL_RUNNER_NAME: "codex-box", CORRAL_DATA_DIR: codexData }),
    ]);
    const workdir = path.join(root, "w");
    const launched = await Promise.all(
      Array.from({ length: 8 }, (_, i) => [
        launch(corral, "render", `sleep 0.2; echo render ${i}`, workdir),
        launch(corral, "review", `sleep 0.2; echo review ${i}`, workdir),
      ]).flat(),
    );
    const ended = await corral.services.waits.waitFor(
      launched.map((j) => j.id),
      60_000,
    );
    for (const job of ended) {
      const [mine, other] = job.agent === "render" ? [gpu, codex] : [codex, gpu];
      const [myData, otherData] = job.agent === "render" ? [gpuData, codexData] : [codexData, gpuData];
      expect(job).toMatchObject({ status: "succeeded", runner: mine?.id });
      expect(job.runner).not.toBe(other?.id);
      // One attempt, and its worker's directory is on its runner's machine only.
      const attempts = await api<{ attempts: JobAttempt[] }>(corral, "GET", `/api/jobs/${job.id}/attempts`);
      expect(attempts.body.attempts).toMatchObject([{ attempt: 1, status: "succeeded", exitCode: 0 }]);
      expect(existsSync(path.join(myData, "jobs", job.id))).toBe(true);
      expect(existsSync(path.join(otherData, "jobs", job.id))).toBe(false);
    }
  });

  test("a remote job's output reaches WebSocket subscribers whole: every line once, in order, also from a cursor mid-stream", async () => {
    const root = tempDir();
    const url = await postgres.database();
    const corral = await server(url, root);
    await shellAgent(corral, "printer", "gpu");
    await runner(root, { CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LABELS: "gpu" });
    const lines = 6000;
    const bursts = 30;
    const per = lines / bursts;
    // Numbered lines in bursts of 200, a pause between: many chunks, many NOTIFYs, copied while the subscriber reads.
    const prompt = `b=0; while [ $b -lt ${bursts} ]; do seq $((b*${per}+1)) $((b*${per}+${per})); b=$((b+1)); sleep 0.05; done`;
    const from0 = await WsClient.open(corral);
    cleanups.push(() => from0.close());
    const job = await launch(corral, "printer", prompt, path.join(root, "w"));
    from0.send({ type: "subscribe_job", jobId: job.id, cursor: 0 });

    // A second subscriber joins mid-stream, from a cursor the first one was sent.
    const mid = await from0.waitFor("output", (m) => m.jobId === job.id && m.text.includes(`\n${lines / 3}\n`), 60_000);
    const late = await WsClient.open(corral);
    cleanups.push(() => late.close());
    late.send({ type: "subscribe_job", jobId: job.id, cursor: mid.cursor });

    await from0.waitForEnd(job.id, 60_000);
    await late.waitForEnd(job.id, 60_000);
    const expected = Array.from({ length: lines }, (_, i) => `${i + 1}\n`).join("");
    const streamed = from0.text(job.id);
    expect(streamed.split("\n").length - 1).toBe(lines);
    expect(streamed === expected).toBe(true);
    const cursors = from0.of("output", job.id).map((m) => m.cursor);
    for (const [i, cursor] of cursors.entries()) if (i > 0) expect(cursor).toBeGreaterThan(cursors[i - 1] as number);

    const before = from0
      .of("output", job.id)
      .filter((m) => m.cursor <= mid.cursor)
      .map((m) => m.text)
      .join("");
    expect(before + late.text(job.id) === expected).toBe(true);
    const lateCursors = late.of("output", job.id).map((m) => m.cursor);
    expect(lateCursors[0]).toBeGreaterThan(mid.cursor);
    for (const [i, cursor] of lateCursors.entries()) if (i > 0) expect(cursor).toBeGreaterThan(lateCursors[i - 1] as number);

    // REST reads the same log.
    const rest = await api<OutputPage>(corral, "GET", `/api/jobs/${job.id}/output?cursor=0&limit=4194304`);
    expect(rest.body.chunks.map((c) => c.text).join("") === expected).toBe(true);
    expect(rest.body.cursor).toBe(cursors.at(-1));
  });
});
