import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DIALECTS, type TestRegistry } from "../db/registry-contract/dialects.js";
import { agentRow, jobRow } from "../db/registry-contract/rows.js";
import { fencedRegistry } from "./fenced-registry.js";

const T = 2 ** 41;
const change = (jobId: string, path: string) => ({ jobId, path, change: "created" as const, size: 1, at: T });

describe.each(DIALECTS)("a runner's fenced registry on $dialect", ({ open }) => {
  let registry: TestRegistry;
  beforeEach(async () => {
    registry = await open();
    await registry.agents.insertMissing([agentRow("gpu_agent", { runnerLabel: "gpu" })]);
    await registry.insertJobs([
      jobRow("mine", { agent: "gpu_agent", status: "running", runner: "r1" }),
      jobRow("lost", { agent: "gpu_agent", status: "lost", runner: "r1" }),
      jobRow("theirs", { agent: "gpu_agent", status: "running", runner: "r2" }),
    ]);
  });
  afterEach(() => registry.close());

  it("records file changes only for the jobs the runner still holds, inside a transaction or not", async () => {
    const r1 = fencedRegistry(registry, "r1");
    await r1.jobFiles.upsert([change("mine", "a.txt"), change("lost", "a.txt"), change("theirs", "a.txt")]);
    await r1.transaction((tx) => tx.jobFiles.upsert([change("mine", "b.txt"), change("lost", "b.txt")]));
    expect((await registry.jobFiles.list("mine")).map((f) => f.path)).toEqual(["a.txt", "b.txt"]);
    expect(await registry.jobFiles.list("lost")).toEqual([]);
    expect(await registry.jobFiles.list("theirs")).toEqual([]);

    // A job given up on while it ran (declared lost): its runner's later changes are refused, removals too.
    await registry.jobFiles.upsert([change("theirs", "kept.txt")]);
    await registry.jobs.update("mine", { status: "lost" });
    await r1.jobFiles.upsert([change("mine", "late.txt")]);
    await r1.jobFiles.remove("mine", ["a.txt"]);
    await r1.jobFiles.remove("theirs", ["kept.txt"]);
    expect((await registry.jobFiles.list("mine")).map((f) => f.path)).toEqual(["a.txt", "b.txt"]);
    expect((await registry.jobFiles.list("theirs")).map((f) => f.path)).toEqual(["kept.txt"]);
  });
});
