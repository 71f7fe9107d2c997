import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { JobOutputRow } from "../schema.js";
import { DIALECTS, type TestRegistry } from "./dialects.js";
import { addJobs, jobRow } from "./rows.js";

const T = 2 ** 41;
const chunk = (jobId: string, seq: number, data: string): JobOutputRow => ({ jobId, seq, stream: seq % 2 ? "out" : "err", data, at: T + seq });

describe.each(DIALECTS)("the job output repository on $dialect", ({ open }) => {
  let registry: TestRegistry;
  beforeEach(async () => {
    registry = await open();
    await addJobs(registry, [jobRow("a", { status: "running" }), jobRow("b", { status: "running" })]);
  });
  afterEach(() => registry.close());

  it("hands out a job's chunks after a seq, in order, a page at a time", async () => {
    const { jobOutput } = registry;
    await jobOutput.append([chunk("a", 1, "line 1\n"), chunk("a", 2, 'ünïcödé ✓ "quoted"\n'), chunk("b", 1, "other\n")]);
    await jobOutput.append([chunk("a", 3, "three\n")]);
    await jobOutput.append([]);
    expect(await jobOutput.after("a", 0, 100)).toEqual([chunk("a", 1, "line 1\n"), chunk("a", 2, 'ünïcödé ✓ "quoted"\n'), chunk("a", 3, "three\n")]);
    expect((await jobOutput.after("a", 1, 1)).map((c) => c.seq)).toEqual([2]);
    expect(await jobOutput.after("a", 3, 100)).toEqual([]);
    expect(await jobOutput.after("ghost", 0, 100)).toEqual([]);
    // A chunk is stored once.
    await expect(jobOutput.append([chunk("a", 3, "again\n")])).rejects.toThrow();
  });

  it("keeps a NUL in the text, or its replacement where the database refuses it", async () => {
    await registry.jobOutput.append([chunk("a", 1, "a\u0000b")]);
    const [row] = await registry.jobOutput.after("a", 0, 10);
    expect(["a\u0000b", "a\ufffdb"]).toContain(row?.data);
  });
});
