import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { sqliteRepos, type TestRegistry } from "../db/registry-contract/dialects.js";
import { addJobs, jobRow } from "../db/registry-contract/rows.js";
import type { RunnerRow } from "../db/schema.js";
import { ServiceError } from "../lib/errors.js";
import { RunnerWorkdirs } from "./on-runners.js";

const runner = (id: string, startedAt: number, more: Partial<RunnerRow> = {}): RunnerRow => ({
  id,
  name: "gpu-box",
  labels: ["gpu"],
  hostname: "h",
  version: "0",
  startedAt,
  heartbeatAt: Date.now(),
  stoppedAt: null,
  ...more,
});

// The server's side alone, on a registry that never NOTIFYs: every answer is found by reading the row again.
describe("RunnerWorkdirs", () => {
  let registry: TestRegistry;
  let onRunners: RunnerWorkdirs;
  beforeEach(async () => {
    registry = await sqliteRepos();
    onRunners = new RunnerWorkdirs(registry, { homeDir: "/home/me", leaseMs: 15_000, answerTimeoutMs: 2000 });
    await registry.runners.register(runner("old", 1, { stoppedAt: 2 }));
    await addJobs(registry, [
      jobRow("j1", { workdir: "/w/remote", runner: "old" }),
      jobRow("j2", { workdir: "/w/moved", runner: "old" }),
      jobRow("j3", { workdir: "/w/moved", runner: "local" }),
      jobRow("j4", { workdir: "/w/remote/inner", runner: "local" }),
      // Still waiting for a runner: it ran nowhere yet, so its workdir stays where its last job ran.
      jobRow("j5", { workdir: "/w/remote", runner: null, status: "queued" }),
      jobRow("j6", { workdir: "/w/waiting", runner: null, status: "queued" }),
    ]);
  });
  afterEach(() => registry.close());

  it("holds a path when it lies in a workdir whose newest job ran on a runner, the deepest first", async () => {
    expect(await onRunners.list()).toEqual([{ path: "/w/remote", runnerId: "old", runnerName: "gpu-box", jobs: 2 }]);
    expect(await onRunners.holding("/w/remote/a/b.txt")).toMatchObject({ path: "/w/remote" });
    expect(await onRunners.holding("/w/remote")).toMatchObject({ path: "/w/remote" });
    // The server's (runner local) again since its newest job; only waiting; lexically elsewhere; relative (refused by the server's own checks).
    expect(await onRunners.holding("/w/moved/x")).toBeNull();
    expect(await onRunners.holding("/w/waiting/x")).toBeNull();
    expect(await onRunners.holding("/w/remote-2/x")).toBeNull();
    expect(await onRunners.holding("w/remote/x")).toBeNull();
  });

  it("reads only the jobs of the path and the directories above it, and decides as from every workdir", async () => {
    await addJobs(registry, [
      jobRow("n1", { workdir: "/w/remote/deep", runner: "old" }),
      jobRow("n2", { workdir: "/w/remote/deep/er", runner: "local" }),
      jobRow("n3", { workdir: "/", runner: "local" }),
    ]);
    const asked = vi.spyOn(registry.jobFiles, "workdirRunners");
    expect(await onRunners.holding("~/../../w/remote/deep/x/../y.txt")).toMatchObject({ path: "/w/remote/deep", runnerId: "old", jobs: 1 });
    expect(asked).toHaveBeenLastCalledWith(["/w/remote/deep/y.txt", "/w/remote/deep", "/w/remote", "/w", "/"]);
    // The same answer as the deepest of all the runner workdirs holding it, path by path.
    const all = await onRunners.list();
    for (const p of ["/w/remote/deep/er/f", "/w/remote/deep", "/w/remote/x", "/w/remote", "/w", "/", "/w/moved/x", "/w/remote-2"]) {
      const deepest = all.filter((w) => p === w.path || p.startsWith(`${w.path}/`)).sort((a, b) => b.path.length - a.path.length)[0] ?? null;
      expect(await onRunners.holding(p), p).toEqual(deepest);
    }
  });

  it("asks the newest runner of the same name (a restarted runner is a new id), and finds its answer without a NOTIFY", async () => {
    await registry.runners.register(runner("new", 10));
    const workdir = (await onRunners.holding("/w/remote/a.txt"))!;
    const asking = onRunners.ask(workdir, "read", "/w/remote/a.txt", { readOffset: 5, readLimit: 10 });
    let pending = await registry.runnerRequests.pending("new");
    while (!pending.length) pending = await registry.runnerRequests.pending("new");
    expect(pending).toMatchObject([{ kind: "read", path: "/w/remote/a.txt", readOffset: 5, readLimit: 10, range: null }]);
    const read = { path: "/w/remote/a.txt", size: 20, mtime: 1, binary: false, offset: 5, length: 3, text: "abc" };
    await registry.runnerRequests.answer(pending[0]!.id, { answeredAt: Date.now(), answer: JSON.stringify(read), error: null });
    expect(await asking).toEqual(read);
    // Read, then forgotten.
    expect(await registry.runnerRequests.get(pending[0]!.id)).toBeUndefined();
  });

  it("throws the runner's refusal as the server's own", async () => {
    await registry.runners.register(runner("new", 10));
    const workdir = (await onRunners.holding("/w/remote/a.txt"))!;
    const asking = onRunners.ask(workdir, "list", "/w/remote/a.txt");
    let pending = await registry.runnerRequests.pending("new");
    while (!pending.length) pending = await registry.runnerRequests.pending("new");
    const refusal = { status: 400, code: "invalid_input", error: "/w/remote/a.txt is not a directory; read it instead", field: "path" };
    await registry.runnerRequests.answer(pending[0]!.id, { answeredAt: Date.now(), answer: null, error: JSON.stringify(refusal) });
    const err = await asking.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceError);
    expect(err).toMatchObject({ status: 400, code: "invalid_input", message: refusal.error, field: "path" });
  });

  it("does not ask a stopped or silent runner, and gives up on one that does not answer", async () => {
    const workdir = (await onRunners.holding("/w/remote/a.txt"))!;
    await expect(onRunners.ask(workdir, "list", "/w/remote/a.txt")).rejects.toMatchObject({
      status: 503,
      message: expect.stringMatching(/runner gpu-box, which is stopped/),
    });
    await registry.runners.register(runner("silent", 10, { heartbeatAt: Date.now() - 20_000 }));
    await expect(onRunners.ask(workdir, "list", "/w/remote/a.txt")).rejects.toMatchObject({
      status: 503,
      message: expect.stringMatching(/runner gpu-box, which has been silent for 20 s/),
    });
    await registry.runners.register(runner("quiet", 20));
    const since = Date.now();
    await expect(onRunners.ask(workdir, "list", "/w/remote/a.txt")).rejects.toMatchObject({
      status: 504,
      message: "runner gpu-box did not answer in 2 s; is it running? see the Runners page",
    });
    expect(Date.now() - since).toBeGreaterThanOrEqual(1950);
    // Given up on: its row is gone, so a late answer is dropped.
    expect(await registry.runnerRequests.pending("quiet")).toEqual([]);
  });
});
