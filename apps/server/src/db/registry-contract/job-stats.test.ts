import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DIALECTS, type TestRegistry } from "./dialects.js";
import { addJobs, jobRow } from "./rows.js";

describe.each(DIALECTS)("the job stats repository on $dialect", ({ open }) => {
  let registry: TestRegistry;
  beforeEach(async () => {
    registry = await open();
  });
  afterEach(() => registry.close());

  it("counts jobs by status, as numbers, leaving out the statuses no job has", async () => {
    expect(await registry.jobStats.countByStatus()).toEqual({});
    await addJobs(registry, [
      jobRow("a", { status: "queued" }),
      jobRow("b", { status: "running" }),
      jobRow("c", { status: "queued" }),
      jobRow("d", { status: "failed" }),
    ]);
    expect(await registry.jobStats.countByStatus()).toEqual({ queued: 2, running: 1, failed: 1 });
  });
});
