import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NewJobFileRow } from "../registry.js";
import { DIALECTS, type TestRegistry } from "./dialects.js";
import { addJobs, jobRow } from "./rows.js";

const T = 2 ** 41;
const file = (jobId: string, path: string, change: NewJobFileRow["change"], size: number | null, at = T): NewJobFileRow => ({
  jobId,
  path,
  change,
  size,
  at,
});

describe.each(DIALECTS)("the job files repository on $dialect", ({ open }) => {
  let registry: TestRegistry;
  beforeEach(async () => {
    registry = await open();
    await addJobs(registry, [
      jobRow("j1", { workdir: "/w/b", createdAt: T + 5 }),
      jobRow("j2", { workdir: "/w/B", createdAt: T }),
      jobRow("j3", { workdir: "/w/b", createdAt: T + 1 }),
    ]);
  });
  afterEach(() => registry.close());

  it("keeps each path's latest change, listed in SQLite's byte order of paths", async () => {
    const { jobFiles } = registry;
    expect(await jobFiles.list("j1")).toEqual([]);
    await jobFiles.upsert([]);
    await jobFiles.upsert([
      file("j1", "b.txt", "created", 3),
      file("j1", "B.txt", "created", 5 * 2 ** 32),
      file("j1", "é/ü 'q' \"d\".txt", "created", 0),
      file("j1", "a/z.txt", "created", 1),
    ]);
    await jobFiles.upsert([
      file("j1", "b.txt", "modified", 4, T + 1),
      file("j1", "a/z.txt", "deleted", null, T + 2),
      file("j2", "b.txt", "created", 9),
    ]);
    // The same path twice in one batch: the last one stays, as when SQLite applies them in turn.
    await jobFiles.upsert([file("j1", "B.txt", "modified", 1, T + 3), file("j1", "B.txt", "deleted", null, T + 4)]);
    expect(await jobFiles.list("j1")).toEqual([
      file("j1", "B.txt", "deleted", null, T + 4),
      file("j1", "a/z.txt", "deleted", null, T + 2),
      file("j1", "b.txt", "modified", 4, T + 1),
      file("j1", "é/ü 'q' \"d\".txt", "created", 0),
    ]);
    await jobFiles.remove("j1", ["b.txt", "a/z.txt", "missing"]);
    await jobFiles.remove("j1", []);
    expect((await jobFiles.list("j1")).map((f) => f.path)).toEqual(["B.txt", "é/ü 'q' \"d\".txt"]);
    expect((await jobFiles.list("j2")).map((f) => f.path)).toEqual(["b.txt"]);
    // Files belong to a job that exists.
    await expect(jobFiles.upsert([file("ghost", "x", "created", 1)])).rejects.toThrow();
  });

  it("stores a job's final scan of more files than one statement takes parameters", async () => {
    const many = Array.from({ length: 20_000 }, (_, i) => file("j1", `f${String(i).padStart(5, "0")}`, "created", i));
    await registry.jobFiles.upsert(many);
    const listed = await registry.jobFiles.list("j1");
    expect(listed.length).toBe(20_000);
    expect(listed.at(-1)).toEqual(many.at(-1));
    await registry.jobFiles.remove(
      "j1",
      many.map((f) => f.path),
    );
    expect(await registry.jobFiles.list("j1")).toEqual([]);
  });

  it("marks a job's list as cut once, apart from its files: not listed, not counted, another job untouched", async () => {
    const { jobFiles } = registry;
    await jobFiles.upsert([file("j1", "a", "created", 1)]);
    expect(await jobFiles.cutAt("j1")).toBeNull();
    await jobFiles.markCut("j1", 10_000, T);
    await jobFiles.markCut("j1", 20_000, T + 1);
    expect(await jobFiles.cutAt("j1")).toBe(10_000);
    expect(await jobFiles.cutAt("j2")).toBeNull();
    expect(await jobFiles.list("j1")).toEqual([file("j1", "a", "created", 1)]);
    expect(await jobFiles.counts(["j1"])).toEqual(new Map([["j1", { created: 1, modified: 0, deleted: 0 }]]));
  });

  it("counts each job's created, modified and deleted files, leaving out jobs with none", async () => {
    const { jobFiles } = registry;
    expect(await jobFiles.counts([])).toEqual(new Map());
    await jobFiles.upsert([
      file("j1", "a", "created", 1),
      file("j1", "b", "created", 1),
      file("j1", "c", "deleted", null),
      file("j2", "a", "modified", 1),
    ]);
    expect(await jobFiles.counts(["j1", "j2", "j3", "ghost"])).toEqual(
      new Map([
        ["j1", { created: 2, modified: 0, deleted: 1 }],
        ["j2", { created: 0, modified: 1, deleted: 0 }],
      ]),
    );
  });

  it("lists every workdir jobs used, with how many and when the newest was added, in SQLite's byte order", async () => {
    expect(await registry.jobFiles.jobWorkdirs()).toEqual([
      { workdir: "/w/B", jobs: 1, lastJobAt: T },
      { workdir: "/w/b", jobs: 2, lastJobAt: T + 5 },
    ]);
  });

  it("keeps nothing of a rolled-back transaction", async () => {
    await registry.jobFiles.upsert([file("j1", "kept", "created", 1)]);
    await expect(
      registry.transaction(async (tx) => {
        await tx.jobFiles.upsert([file("j1", "kept", "deleted", null), file("j1", "dropped", "created", 2)]);
        await tx.jobFiles.remove("j1", ["kept"]);
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(await registry.jobFiles.list("j1")).toEqual([file("j1", "kept", "created", 1)]);
  });
});
