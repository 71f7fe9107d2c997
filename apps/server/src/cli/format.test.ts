import { afterEach, beforeEach, expect, it } from "vitest";
import { sqliteRepos, type TestRegistry } from "../db/registry-contract/dialects.js";
import { addJobs, jobRow } from "../db/registry-contract/rows.js";
import { toJob } from "../jobs/job-view.js";
import { jobSummary } from "./format.js";

let registry: TestRegistry;
beforeEach(async () => {
  registry = await sqliteRepos();
});
afterEach(() => registry.close());

it("a job's summary names the runner of a job another machine ran, and says nothing of the server's own", async () => {
  await addJobs(registry, [
    jobRow("here00000001", { agent: "kiro", runner: "local", startedAt: 1000, endedAt: 4200 }),
    jobRow("there0000001", { agent: "kiro", runner: "gpu-box-1a2b3c4d", startedAt: 1000, endedAt: 4200 }),
  ]);
  const summary = async (id: string) => jobSummary(toJob((await registry.jobs.get(id))!));
  expect(await summary("here00000001")).toBe("job here00000001 (kiro) succeeded in 3.2s");
  expect(await summary("there0000001")).toBe("job there0000001 (kiro on runner gpu-box-1a2b3c4d) succeeded in 3.2s");
});

it("a job's cost reads as in the panel: unpriced tokens say so instead of leaving the cost out", async () => {
  await addJobs(registry, [
    jobRow("unpriced0001", { agent: "opencode", startedAt: 1000, endedAt: 2000, inputTokens: 1200, outputTokens: 40 }),
    jobRow("priced000001", {
      agent: "claude",
      startedAt: 1000,
      endedAt: 2000,
      inputTokens: 1200,
      outputTokens: 40,
      costUsd: 0.0042,
      costSource: "reported",
    }),
  ]);
  const summary = async (id: string) => jobSummary(toJob((await registry.jobs.get(id))!));
  expect(await summary("unpriced0001")).toBe("job unpriced0001 (opencode) succeeded in 1.0s · 1,240 tokens · unpriced");
  expect(await summary("priced000001")).toBe("job priced000001 (claude) succeeded in 1.0s · 1,240 tokens · $0.0042");
});
