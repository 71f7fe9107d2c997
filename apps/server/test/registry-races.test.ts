import path from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { isFinalStatus, type Job, type JobStatus } from "@corral/shared";
import type { LaunchRequest } from "../src/jobs/launch-request.js";
import { sleep, startServer, until, type TestServer } from "./helpers.js";

/**
 * The registry answers asynchronously: a check and the write it allows are no longer one
 * synchronous step, so everything that checks then writes does both in one transaction. Each test
 * here starts its calls together, so they interleave at every `await`.
 */

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
  await server.services.agents.create({ name: "many", kind: "kiro", maxConcurrent: 50 });
});
afterAll(async () => {
  await server.services.cancels.cancelAll();
  await server.close();
});

const launch = (agent: string, input: LaunchRequest, on = server) => on.services.launches.launch(agent, input, "rest");
const codeOf = (result: PromiseSettledResult<Job>) => (result.status === "rejected" ? (result.reason as { code?: string }).code : "launched");

test("launches into one workdir at once: one is stored, the others find it busy", async () => {
  const workdir = path.join(server.root, "busy");
  const results = await Promise.allSettled(Array.from({ length: 4 }, () => launch("many", { prompt: "sleep 1", workdir })));
  expect(results.map(codeOf).sort()).toEqual(["launched", "workdir_busy", "workdir_busy", "workdir_busy"]);
  const [launched] = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
  await server.services.cancels.cancel((launched as Job).id);
});

test("launches at once never fill the queue past its limit", async () => {
  const limited = await startServer({ CORRAL_QUEUE_LIMIT: "3" });
  try {
    await limited.services.agents.create({ name: "one", kind: "kiro", maxConcurrent: 1 });
    const blocker = await launch("one", { prompt: "hang", workdir: path.join(limited.root, "blocker") }, limited);
    await until(async () => ((await limited.services.jobs.get(blocker.id)).status === "running" ? true : undefined));
    const workdir = path.join(limited.root, "queue");
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, () => launch("one", { prompt: "print 1", workdir, sharedWorkdir: true }, limited)),
    );
    expect(results.map(codeOf).sort()).toEqual(["launched", "launched", "launched", "queue_full", "queue_full", "queue_full"]);
    expect(limited.services.jobEngine.queuedCount()).toBe(3);
    await limited.services.cancels.cancelAll();
    expect(limited.services.jobEngine.queuedCount()).toBe(0);
  } finally {
    await limited.close();
  }
});

test("a cancel and a start at once: a job never changes after it ended", async () => {
  const seen = new Map<string, JobStatus[]>();
  const onJob = (job: Job) => seen.set(job.id, [...(seen.get(job.id) ?? []), job.status]);
  server.services.jobEvents.on("job", onJob);
  try {
    const jobs = await Promise.all(
      Array.from({ length: 40 }, (_, i) => launch("many", { prompt: "print 1", workdir: path.join(server.root, "cancel-race", String(i)) })),
    );
    // Each cancel comes a little later than the one before: before, while and after the start is stored.
    await Promise.all(
      jobs.map(async (job, i) => {
        await sleep(i * 15);
        await server.services.cancels.cancel(job.id);
      }),
    );
    const ended = await server.services.waits.waitFor(
      jobs.map((j) => j.id),
      20_000,
    );
    expect(ended.every((j) => isFinalStatus(j.status))).toBe(true);
    for (const job of ended) {
      const statuses = seen.get(job.id) ?? [];
      const end = statuses.findIndex(isFinalStatus);
      expect(statuses.slice(end + 1), `${job.id}: ${statuses.join(" → ")}`).toEqual([]);
      expect(statuses.at(-1)).toBe(job.status);
    }
  } finally {
    server.services.jobEvents.off("job", onJob);
  }
});

test("one name registered twice at once in a session: one registration, the other finds the name taken", async () => {
  const hub = server.services.conversations;
  const results = await Promise.allSettled([hub.register("race", "twin", null), hub.register("race", "twin", null)]);
  expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
  const refused = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
  expect((refused.reason as Error).message).toMatch(/the name twin is taken/);
  for (const r of results) if (r.status === "fulfilled") await hub.leave(r.value.member);
});
