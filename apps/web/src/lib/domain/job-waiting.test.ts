import type { Job } from "@corral/shared";
import { describe, expect, it } from "vitest";
import { waitingReason } from "./job-waiting.js";

const t0 = Date.UTC(2026, 11, 7, 12);
const job = (patch: Partial<Job>): Job =>
  ({ id: "aaaaaaaaaaaa", agent: "codex", status: "queued", attempt: 1, retry: null, runner: "local", createdAt: t0, ...patch }) as Job;
const codex = { name: "codex", maxConcurrent: 1, runnerLabel: null };

describe("why a queued job waits", () => {
  it("counts a retry's backoff down from its last attempt's end", () => {
    const retry = { maxAttempts: 3, exitCodes: [], outputPatterns: [], backoffS: 4 };
    const retrying = job({ attempt: 2, retry });
    expect(waitingReason(retrying, { agent: codex, active: [], lastAttemptEnd: t0, now: t0 + 1000 })).toBe("retry 2 of 3 in 3s");
    // The third attempt waits twice as long.
    expect(waitingReason(job({ attempt: 3, retry }), { agent: codex, active: [], lastAttemptEnd: t0, now: t0 + 1000 })).toBe("retry 3 of 3 in 7s");
    expect(waitingReason(retrying, { agent: codex, active: [], now: t0 })).toBe("retry 2 of 3, after a pause");
    // Its pause over, it waits as any job does.
    expect(waitingReason(retrying, { agent: codex, active: [], lastAttemptEnd: t0, now: t0 + 5000 })).toBe("starting");
  });

  it("names the agent's limit and the job it is behind, and those queued before it", () => {
    const running = job({ id: "bbbbbbbbbbbb", status: "running", createdAt: t0 - 10 });
    const earlier = job({ id: "cccccccccccc", createdAt: t0 - 5 });
    const waiting = job({});
    expect(waitingReason(waiting, { agent: codex, active: [running, waiting], now: t0 })).toBe("codex runs 1 at once: behind job bbbbbbbbbbbb");
    expect(waitingReason(waiting, { agent: codex, active: [running, earlier, waiting], now: t0 })).toBe(
      "codex runs 1 at once: behind job bbbbbbbbbbbb and 1 queued before it",
    );
    const two = { ...codex, maxConcurrent: 2 };
    const other = job({ id: "dddddddddddd", status: "running", createdAt: t0 - 8 });
    expect(waitingReason(waiting, { agent: two, active: [running, other, waiting], now: t0 })).toBe("codex runs 2 at once: behind 2 running jobs");
    // Another agent's jobs do not hold it back.
    expect(waitingReason(waiting, { agent: codex, active: [{ ...running, agent: "gemini" }, waiting], now: t0 })).toBe("starting");
  });

  it("says which runner it waits for, and nothing of a job that is not queued", () => {
    const gpu = { ...codex, runnerLabel: "gpu" };
    expect(waitingReason(job({ runner: null }), { agent: gpu, active: [], now: t0 })).toBe("waiting for a runner with label gpu");
    expect(waitingReason(job({ status: "running" }), { agent: codex, active: [], now: t0 })).toBeNull();
  });
});
