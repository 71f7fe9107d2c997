import { setTimeout as sleep } from "node:timers/promises";
import { expect, test } from "vitest";
import { Scheduler } from "./scheduler.js";

test("a limit that cannot be read (the registry unreachable) leaves the jobs queued, and the queue tries again by itself", async () => {
  let reachable = false;
  const started: string[] = [];
  const scheduler = new Scheduler(
    async () => {
      if (!reachable) throw new Error("connect ECONNREFUSED");
      return 2;
    },
    (_agent, jobId) => started.push(jobId),
    100,
  );
  scheduler.enqueue("a", "j1");
  scheduler.enqueue("a", "j2");
  await sleep(50);
  expect(started).toEqual([]);
  expect(scheduler.queuedCount()).toBe(2);
  reachable = true;
  // Nothing else happens to the queue: the retry alone starts them, in order.
  await expect.poll(() => started, { timeout: 5000 }).toEqual(["j1", "j2"]);
  scheduler.close();
});

test("a job that could not start for now goes back to the head of its queue, gives back its slot, and starts again", async () => {
  const started: string[] = [];
  const scheduler = new Scheduler(
    async () => 1,
    (_agent, jobId) => started.push(jobId),
    100,
  );
  scheduler.enqueue("a", "j1");
  scheduler.enqueue("a", "j2");
  await expect.poll(() => started).toEqual(["j1"]);
  expect(scheduler.runningCount("a")).toBe(1);
  scheduler.startLater("a", "j1");
  expect(scheduler.runningCount("a")).toBe(0);
  expect(scheduler.queuedCount()).toBe(2);
  // After the pause, j1 again, before j2.
  await expect.poll(() => started, { timeout: 5000 }).toEqual(["j1", "j1"]);
  scheduler.close();
});

test("once closed, nothing is started after a pause", async () => {
  const started: string[] = [];
  const scheduler = new Scheduler(
    async () => 1,
    (_agent, jobId) => started.push(jobId),
    100,
  );
  scheduler.enqueue("a", "j1");
  await expect.poll(() => started).toEqual(["j1"]);
  scheduler.close();
  scheduler.startLater("a", "j1");
  await sleep(1500);
  expect(started).toEqual(["j1"]);
});

test("pumping every queue starts what limits raised meanwhile allow, told of no agent in particular", async () => {
  const limits: Record<string, number> = { a: 1, b: 1 };
  const started: string[] = [];
  const scheduler = new Scheduler(
    async (agent) => limits[agent] ?? 0,
    (_agent, jobId) => started.push(jobId),
    100,
  );
  for (const job of ["a1", "a2", "b1", "b2"]) scheduler.enqueue(job.slice(0, 1), job);
  await expect.poll(() => started).toEqual(["a1", "b1"]);
  limits.a = 2;
  limits.b = 2;
  scheduler.pumpAll();
  await expect.poll(() => [...started].sort()).toEqual(["a1", "a2", "b1", "b2"]);
  expect(scheduler.queuedCount()).toBe(0);
  scheduler.close();
});

test("a job counted already (a runner's claim) starts at once without its limit read, unless jobs of its agent wait here: then behind them", async () => {
  let limit = 0;
  let reads = 0;
  const started: string[] = [];
  const scheduler = new Scheduler(
    async () => {
      reads++;
      return limit;
    },
    (_agent, jobId) => started.push(jobId),
    100,
  );
  scheduler.startCounted("a", "claimed1", 1);
  // Started in the same turn: no limit was read (a limit of 0 would have held it).
  expect(started).toEqual(["claimed1"]);
  expect(reads).toBe(0);
  expect(scheduler.runningCount("a")).toBe(1);
  // A job held here by the limit (lowered since its claim): the next claimed job waits behind it.
  scheduler.enqueue("a", "held");
  await expect.poll(() => reads).toBe(1);
  scheduler.startCounted("a", "claimed2", 1);
  expect(started).toEqual(["claimed1"]);
  expect(scheduler.queuedCount()).toBe(2);
  limit = 3;
  scheduler.released("a");
  await expect.poll(() => started).toEqual(["claimed1", "held", "claimed2"]);
  scheduler.close();
});

test("a job counted already waits when this process runs as many of its agent's jobs as the claim left room for here (a worker the registry no longer counts, of a job declared lost, runs on)", async () => {
  let reads = 0;
  const started: string[] = [];
  const scheduler = new Scheduler(
    async () => {
      reads++;
      return 1;
    },
    (_agent, jobId) => started.push(jobId),
    100,
  );
  // Its worker still runs here, though the registry counts its job no more (declared lost).
  scheduler.adopt("a");
  // The claim found room: the agent's limit is 1, and nothing is held elsewhere.
  scheduler.startCounted("a", "claimed", 1);
  expect(started).toEqual([]);
  expect(scheduler.queuedCount()).toBe(1);
  // The lost job's worker ends: the claimed job starts, its limit read.
  scheduler.released("a");
  await expect.poll(() => started).toEqual(["claimed"]);
  expect(reads).toBeGreaterThan(0);
  scheduler.close();
});
