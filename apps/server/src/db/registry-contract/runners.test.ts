import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunnerRow } from "../schema.js";
import { CANCEL_CHANNEL, listen } from "../pg/job-changes.js";
import { DIALECTS, type TestRegistry } from "./dialects.js";
import { agentRow, jobRow } from "./rows.js";

const T = 2 ** 41;
const runner = (id: string, startedAt: number): RunnerRow => ({
  id,
  name: `box "${id}" ✓`,
  labels: ["gpu", "codex", "host-1.lan"],
  hostname: "host-1.lan",
  version: "0.17.0",
  startedAt,
  heartbeatAt: startedAt,
  stoppedAt: null,
});

describe.each(DIALECTS)("the runners repository on $dialect", ({ open }) => {
  let registry: TestRegistry;
  beforeEach(async () => {
    registry = await open();
  });
  afterEach(() => registry.close());

  it("registers runners and lists them, the first started first, with their labels as given", async () => {
    const { runners } = registry;
    await runners.register(runner("b", T + 2));
    await runners.register(runner("a", T + 1));
    await runners.register(runner("c", T + 2));
    expect(await runners.get("a")).toEqual(runner("a", T + 1));
    expect(await runners.get("ghost")).toBeUndefined();
    expect((await runners.list()).map((r) => r.id)).toEqual(["a", "b", "c"]);
    // An id is one start of one runner: registering it again is refused.
    await expect(runners.register(runner("a", T + 5))).rejects.toThrow();
  });

  it("stores each heartbeat, saying whether the runner is known", async () => {
    const { runners } = registry;
    await runners.register(runner("a", T));
    expect(await runners.heartbeat("a", T + 2000)).toBe(true);
    expect(await runners.heartbeat("ghost", T + 2000)).toBe(false);
    expect(await runners.get("a")).toMatchObject({ startedAt: T, heartbeatAt: T + 2000, stoppedAt: null });
  });

  it("marks a runner stopped once, keeping the first time it said so", async () => {
    const { runners } = registry;
    await runners.register(runner("a", T));
    expect(await runners.markStopped("a", T + 10)).toBe(true);
    expect(await runners.markStopped("a", T + 20)).toBe(false);
    expect(await runners.markStopped("ghost", T + 20)).toBe(false);
    expect(await runners.get("a")).toMatchObject({ stoppedAt: T + 10 });
  });

  it("claims the oldest queued job whose agent asks for one of the runner's labels, once", async () => {
    await registry.agents.insertMissing([
      agentRow("gpu_agent", { runnerLabel: "gpu", maxConcurrent: 5 }),
      agentRow("codex_agent", { runnerLabel: "codex", maxConcurrent: 5 }),
      agentRow("local_agent", { maxConcurrent: 5 }),
    ]);
    await registry.insertJobs([
      jobRow("done", { agent: "gpu_agent", status: "succeeded" }),
      jobRow("local", { agent: "local_agent", status: "queued" }),
      jobRow("codex1", { agent: "codex_agent", status: "queued" }),
      jobRow("gpu1", { agent: "gpu_agent", status: "queued" }),
      jobRow("gpu2", { agent: "gpu_agent", status: "queued" }),
    ]);
    const { runners } = registry;
    expect(await runners.claim("r1", [])).toEqual({ job: undefined, more: false, waiting: false });
    // What it leaves tells the runner whether to claim again now (more) or when a job of its ends (waiting).
    expect(await runners.claim("r1", ["gpu", "big-disk"])).toMatchObject({
      job: { id: "gpu1", runner: "r1", status: "queued" },
      more: true,
      waiting: true,
    });
    expect(await runners.claim("r2", ["gpu"])).toMatchObject({ job: { id: "gpu2", runner: "r2" }, more: false, waiting: false });
    expect(await runners.claim("r2", ["gpu"])).toEqual({ job: undefined, more: false, waiting: false });
    expect(await runners.claim("r1", ["codex", "gpu"])).toMatchObject({ job: { id: "codex1", runner: "r1" }, more: false, waiting: false });
    // A job of an agent without a label is the server's: no runner takes it.
    expect((await runners.claim("r1", ["gpu", "codex", "local"])).job).toBeUndefined();
    expect((await registry.jobs.get("local"))?.runner).toBeNull();
  });

  it("never passes an agent's maxConcurrent, counting every runner's jobs and the server's", async () => {
    await registry.agents.insertMissing([
      agentRow("gpu_agent", { runnerLabel: "gpu", maxConcurrent: 2 }),
      agentRow("other", { runnerLabel: "gpu", maxConcurrent: 1 }),
    ]);
    await registry.insertJobs([
      // Started by the server before the agent was given its label: it still counts.
      jobRow("running", { agent: "gpu_agent", status: "running" }),
      jobRow("a", { agent: "gpu_agent", status: "queued" }),
      jobRow("b", { agent: "gpu_agent", status: "queued" }),
      jobRow("c", { agent: "other", status: "queued" }),
    ]);
    const { runners } = registry;
    // gpu_agent is full once "a" is claimed (one running, one claimed), but the other agent's job may be taken.
    // roomHere: the limit less what others hold (the server's running job), as the runner's own limit read would say.
    expect(await runners.claim("r1", ["gpu"])).toMatchObject({ job: { id: "a" }, more: true, waiting: true, roomHere: 1 });
    // gpu_agent is full: the next claim passes on to the other agent.
    expect(await runners.claim("r2", ["gpu"])).toMatchObject({ job: { id: "c" }, more: false, waiting: true, roomHere: 1 });
    // "b" waits behind gpu_agent's limit: nothing to take now, but a job's end should claim again.
    expect(await runners.claim("r2", ["gpu"])).toEqual({ job: undefined, more: false, waiting: true });
    await registry.jobs.update("running", { status: "succeeded" });
    expect(await runners.claim("r2", ["gpu"])).toMatchObject({ job: { id: "b" }, more: false, waiting: false, roomHere: 1 });
    // The claiming runner's own jobs are not others': r1 running "a" may run both of the agent's.
    await registry.jobs.update("a", { status: "running" });
    await registry.jobs.update("b", { status: "succeeded" });
    await registry.insertJobs([jobRow("d", { agent: "gpu_agent", status: "queued" })]);
    expect(await runners.claim("r1", ["gpu"])).toMatchObject({ job: { id: "d" }, roomHere: 2 });
  });

  it("lets claims from many runners at once take each job once and keep to the limit", async () => {
    await registry.agents.insertMissing([agentRow("gpu_agent", { runnerLabel: "gpu", maxConcurrent: 3 })]);
    await registry.insertJobs(Array.from({ length: 8 }, (_, i) => jobRow(`j${i}`, { agent: "gpu_agent", status: "queued" })));
    const claimed = await Promise.all(Array.from({ length: 8 }, (_, i) => registry.runners.claim(`r${i}`, ["gpu"])));
    const ids = claimed.flatMap(({ job }) => (job ? [job.id] : []));
    expect(ids.sort()).toEqual(["j0", "j1", "j2"]);
  });

  it("gives back the jobs a stopping runner claimed but never started", async () => {
    await registry.agents.insertMissing([agentRow("gpu_agent", { runnerLabel: "gpu", maxConcurrent: 5 })]);
    await registry.insertJobs([
      jobRow("a", { agent: "gpu_agent", status: "queued" }),
      jobRow("b", { agent: "gpu_agent", status: "queued" }),
      jobRow("c", { agent: "gpu_agent", status: "queued" }),
    ]);
    await registry.runners.claim("r1", ["gpu"]);
    await registry.runners.claim("r1", ["gpu"]);
    await registry.runners.claim("r2", ["gpu"]);
    await registry.jobs.update("a", { status: "running" });
    expect(await registry.runners.releaseQueued("r1")).toMatchObject([{ runner: null, status: "queued" }]);
    expect((await Promise.all(["a", "b", "c"].map((id) => registry.jobs.get(id)))).map((j) => j?.runner)).toEqual(["r1", null, "r2"]);
    expect((await registry.runners.claim("r3", ["gpu"])).job?.id).toBe("b");
  });

  it("registers the server's own runner again at each start: one row, brought up to date", async () => {
    await registry.runners.registerLocal({ ...runner("local", T), name: "local", labels: [] });
    await registry.runners.registerLocal({ ...runner("local", T + 9), name: "local", labels: [], version: "0.18.0", stoppedAt: null });
    expect(await registry.runners.list()).toEqual([{ ...runner("local", T + 9), name: "local", labels: [], version: "0.18.0" }]);
  });

  it("moves an agent's waiting jobs between the server's runner and the runners, never one another runner holds", async () => {
    await registry.agents.insertMissing([agentRow("plain"), agentRow("gpu_agent", { runnerLabel: "gpu", maxConcurrent: 5 })]);
    await registry.insertJobs([
      jobRow("a", { agent: "plain", status: "queued", runner: null }),
      jobRow("b", { agent: "plain", status: "queued", runner: "r1" }),
      jobRow("c", { agent: "plain", status: "running", runner: null }),
      jobRow("d", { agent: "gpu_agent", status: "queued", runner: null }),
      jobRow("f", { agent: "plain", status: "queued", runner: null }),
    ]);
    // One agent's: only its queued jobs nobody holds, oldest first.
    expect((await registry.runners.takeQueued("local", "plain")).map((j) => [j.id, j.runner])).toEqual([
      ["a", "local"],
      ["f", "local"],
    ]);
    // Given back, one agent's only.
    await registry.jobs.update("d", { runner: "local" });
    expect((await registry.runners.releaseQueued("local", "gpu_agent")).map((j) => [j.id, j.runner])).toEqual([["d", null]]);
    expect((await registry.jobs.get("a"))?.runner).toBe("local");
    // Without an agent: every agent without a runner label.
    await registry.jobs.update("a", { runner: null });
    expect((await registry.runners.takeQueued("local")).map((j) => j.id)).toEqual(["a"]);
    expect((await Promise.all(["b", "c", "d"].map((id) => registry.jobs.get(id)))).map((j) => j?.runner)).toEqual(["r1", null, null]);
  });

  it("moves an agent's waiting jobs only the way its label is now (a label flipped back before the move ran)", async () => {
    await registry.agents.insertMissing([agentRow("plain"), agentRow("gpu_agent", { runnerLabel: "gpu" })]);
    await registry.insertJobs([
      jobRow("a", { agent: "plain", status: "queued", runner: "local" }),
      jobRow("b", { agent: "gpu_agent", status: "queued", runner: null }),
    ]);
    // plain has no label (any more): local keeps its job; gpu_agent has one (again): its job stays the runners'.
    expect(await registry.runners.releaseQueued("local", "plain")).toEqual([]);
    expect(await registry.runners.takeQueued("local", "gpu_agent")).toEqual([]);
    expect((await registry.jobs.get("a"))?.runner).toBe("local");
    expect((await registry.jobs.get("b"))?.runner).toBeNull();
  });

  it("lets only the runner holding a job write to it", async () => {
    await registry.agents.insertMissing([agentRow("gpu_agent", { runnerLabel: "gpu" })]);
    await registry.insertJobs([jobRow("a", { agent: "gpu_agent", status: "queued" })]);
    expect(await registry.jobs.updateClaimed("a", "r1", { status: "running" })).toBeUndefined();
    await registry.runners.claim("r1", ["gpu"]);
    expect(await registry.jobs.updateClaimed("a", "r1", { status: "running", startedAt: T })).toMatchObject({ status: "running", runner: "r1" });
    // Declared lost (r1 fell silent): its late end then changes nothing.
    await registry.jobs.update("a", { status: "lost" });
    expect(await registry.jobs.updateClaimed("a", "r1", { status: "succeeded" })).toBeUndefined();
    expect(await registry.jobs.get("a")).toMatchObject({ status: "lost", startedAt: T, runner: "r1" });
    await registry.jobs.update("a", { status: "queued", runner: "r2" });
    expect(await registry.jobs.updateClaimed("a", "r1", { status: "succeeded" })).toBeUndefined();
  });

  it("tells the runner a job was asked to stop once the transaction that asked commits (PostgreSQL: NOTIFY with the id)", async () => {
    const heard: string[] = [];
    const listener = registry.url ? await listen(registry.url, { [CANCEL_CHANNEL]: (id) => heard.push(id) }) : null;
    try {
      await expect(
        registry.transaction(async (tx) => {
          await tx.runners.askToStop("rolled-back");
          throw new Error("roll back");
        }),
      ).rejects.toThrow("roll back");
      await registry.transaction(async (tx) => {
        await tx.runners.askToStop("job-1");
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(heard).toEqual([]);
      });
      if (!listener) return;
      const deadline = Date.now() + 5000;
      while (!heard.length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(heard).toEqual(["job-1"]);
    } finally {
      await listener?.close();
    }
  });

  it("keeps nothing of a rolled-back transaction", async () => {
    await expect(
      registry.transaction(async (tx) => {
        await tx.runners.register(runner("a", T));
        expect(await tx.runners.list()).toHaveLength(1);
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(await registry.runners.list()).toEqual([]);
  });
});
