import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ANSWER_CHANNEL, listen, REQUEST_CHANNEL } from "../pg/job-changes.js";
import type { RunnerRequestRow } from "../schema.js";
import { DIALECTS, type TestRegistry } from "./dialects.js";
import { addJobs, jobRow } from "./rows.js";

const T = 2 ** 41;
const request = (id: string, runner: string, askedAt: number): Omit<RunnerRequestRow, "answeredAt" | "answer" | "error"> => ({
  id,
  runner,
  kind: "read",
  path: "/w/ünï ✓.txt",
  readOffset: 2 ** 33,
  readLimit: 4096,
  range: null,
  args: null,
  askedAt,
});

async function heard(channel: string, url: string | undefined, act: () => Promise<void>): Promise<string[]> {
  const got: string[] = [];
  const listener = url ? await listen(url, { [channel]: (id) => got.push(id) }) : null;
  try {
    await act();
    const deadline = Date.now() + 5000;
    while (listener && !got.length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    return got;
  } finally {
    await listener?.close();
  }
}

describe.each(DIALECTS)("the runner requests repository on $dialect", ({ open }) => {
  let registry: TestRegistry;
  beforeEach(async () => {
    registry = await open();
    for (const id of ["box-a", "box-b"]) {
      await registry.runners.register({ id, name: id, labels: ["gpu"], hostname: "h", version: "0", startedAt: T, heartbeatAt: T, stoppedAt: null });
    }
  });
  afterEach(() => registry.close());

  it("hands a runner its unanswered requests, oldest first, and stores one answer per request", async () => {
    const { runnerRequests } = registry;
    await runnerRequests.ask(request("r2", "box-a", T + 2));
    await runnerRequests.ask(request("r1", "box-a", T + 1));
    await runnerRequests.ask({ ...request("r3", "box-b", T + 1), kind: "raw", range: "bytes=-10" });
    expect((await runnerRequests.pending("box-a")).map((r) => r.id)).toEqual(["r1", "r2"]);
    expect(await runnerRequests.get("r3")).toEqual({
      ...request("r3", "box-b", T + 1),
      kind: "raw",
      range: "bytes=-10",
      answeredAt: null,
      answer: null,
      error: null,
    });

    const answer = { answeredAt: T + 5, answer: JSON.stringify({ text: 'a\u0000b "ünï"' }), error: null };
    expect(await runnerRequests.answer("r1", answer)).toBe(true);
    // Answered once: a second answer (a runner that heard the request twice) changes nothing.
    expect(await runnerRequests.answer("r1", { answeredAt: T + 6, answer: null, error: "{}" })).toBe(false);
    expect(await runnerRequests.get("r1")).toMatchObject(answer);
    expect(JSON.parse((await runnerRequests.get("r1"))?.answer ?? "")).toEqual({ text: 'a\u0000b "ünï"' });
    expect((await runnerRequests.pending("box-a")).map((r) => r.id)).toEqual(["r2"]);
    // A request given up on is gone: its late answer is dropped.
    await runnerRequests.remove("r2");
    expect(await runnerRequests.answer("r2", answer)).toBe(false);
    expect(await runnerRequests.pending("box-a")).toEqual([]);
  });

  it("sweeps requests older than a moment, answered or not", async () => {
    const { runnerRequests } = registry;
    await runnerRequests.ask(request("old", "box-a", T));
    await runnerRequests.ask(request("old-answered", "box-a", T + 1));
    await runnerRequests.answer("old-answered", { answeredAt: T + 2, answer: "{}", error: null });
    await runnerRequests.ask(request("new", "box-a", T + 60_000));
    expect(await runnerRequests.sweep(T + 60_000)).toBe(2);
    expect((await runnerRequests.pending("box-a")).map((r) => r.id)).toEqual(["new"]);
    expect(await runnerRequests.get("old-answered")).toBeUndefined();
  });

  it("tells the runner of a request and the server of an answer (PostgreSQL: NOTIFY with the id only)", async () => {
    const { runnerRequests } = registry;
    const asked = await heard(REQUEST_CHANNEL, registry.url, () => runnerRequests.ask(request("r1", "box-a", T)));
    const answered = await heard(ANSWER_CHANNEL, registry.url, async () => {
      await runnerRequests.answer("r1", { answeredAt: T + 1, answer: "{}", error: null });
    });
    if (registry.url) {
      expect(asked).toEqual(["r1"]);
      expect(answered).toEqual(["r1"]);
    }
  });

  it("says on which runner each workdir's jobs ran, with the newest of each", async () => {
    await addJobs(registry, [
      jobRow("j1", { workdir: "/w/remote", runner: "box-a", status: "succeeded" }),
      jobRow("j2", { workdir: "/w/remote", runner: "box-b", status: "succeeded" }),
      jobRow("j3", { workdir: "/w/local", runner: null, status: "succeeded" }),
      jobRow("j4", { workdir: "/w/remote", runner: "box-a", status: "succeeded" }),
    ]);
    const rows = (await registry.jobFiles.workdirRunners()).sort((a, b) => a.newest - b.newest);
    expect(rows.map(({ workdir, runner, jobs }) => ({ workdir, runner, jobs }))).toEqual([
      { workdir: "/w/remote", runner: "box-b", jobs: 1 },
      { workdir: "/w/local", runner: null, jobs: 1 },
      { workdir: "/w/remote", runner: "box-a", jobs: 2 },
    ]);
    expect(rows.every((r) => typeof r.newest === "number" && typeof r.jobs === "number")).toBe(true);
  });

  it("says the same of only the workdirs asked for, matching each exactly (bytes, not the locale's collation)", async () => {
    await addJobs(registry, [
      jobRow("j1", { workdir: "/w/remote", runner: "box-a", status: "succeeded" }),
      jobRow("j2", { workdir: "/w/remote/inner", runner: "box-b", status: "succeeded" }),
      jobRow("j3", { workdir: "/w/Remote", runner: "box-b", status: "succeeded" }),
      jobRow("j4", { workdir: "/w/remote", runner: null, status: "queued" }),
      jobRow("j5", { workdir: "/w/ünï ✓", runner: "box-a", status: "succeeded" }),
      jobRow("j6", { workdir: "/w/remote", runner: "box-a", status: "failed" }),
      jobRow("j7", { workdir: "/", runner: "box-b", status: "succeeded" }),
    ]);
    const all = await registry.jobFiles.workdirRunners();
    const byKey = (rows: typeof all) => [...rows].sort((a, b) => a.newest - b.newest);
    const asked = ["/w/remote/inner/a.txt", "/w/remote/inner", "/w/remote", "/w/ünï ✓", "/w", "/"];
    expect(byKey(await registry.jobFiles.workdirRunners(asked))).toEqual(byKey(all.filter((r) => asked.includes(r.workdir))));
    expect(byKey(await registry.jobFiles.workdirRunners(["/w/remote"])).map(({ runner, jobs }) => ({ runner, jobs }))).toEqual([
      { runner: null, jobs: 1 },
      { runner: "box-a", jobs: 2 },
    ]);
    expect(await registry.jobFiles.workdirRunners(["/w/REMOTE", "/w/remote/", "/w/unknown"])).toEqual([]);
    expect(await registry.jobFiles.workdirRunners([])).toEqual([]);
  });
});
