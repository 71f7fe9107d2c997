import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { CostReport, Job, JobAttemptList, JobFiles } from "@corral/shared";
import { api, startServer, type TestServer } from "./helpers.js";
import { connectMcp, textOf } from "./mcp-client.js";

/**
 * A job retried three times tells one true story on every door: one record per attempt with its
 * own times, error and usage; the job's error is the last attempt's own, its duration runs from
 * the first start, its files are compared with the workdir before the first attempt, and its
 * tokens and cost are the attempts' summed. Run on either registry (CORRAL_TEST_REGISTRY).
 */

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
  // The fake claude's model has no shipped price: given one, the failed attempts' tokens are estimated.
  const price = await api(server, "PUT", "/api/costs/prices", { provider: "anthropic", model: "claude-opus-4-8", inputPerM: 3, outputPerM: 15 });
  expect(price.status).toBe(200);
});
afterAll(() => server.close());

/** A fake claude that writes a file, reports a turn's usage, then fails `failures` times (stderr "boom <run>") before it succeeds. */
async function retried(name: string, failures: number): Promise<Job> {
  const workdir = path.join(server.root, name);
  const counter = path.join(server.root, `${name}.runs`);
  const launched = await api<Job>(server, "POST", "/api/jobs", {
    agent: "claude",
    workdir,
    prompt: `write made.txt attempt\nsleep 0.3\nfail-until ${counter} ${failures} 1 boom from run`,
    retry: { maxAttempts: 3, exitCodes: [1], backoffS: 0.2 },
  });
  expect(launched.status).toBe(201);
  const [job] = await server.services.waits.waitFor([launched.body.id], 60_000);
  return job as Job;
}

const attemptsOf = async (job: Job) => (await api<JobAttemptList>(server, "GET", `/api/jobs/${job.id}/attempts`)).body.attempts;
const sumOf = (values: (number | null)[]) => values.reduce<number>((n, v) => n + (v ?? 0), 0);

describe("a job that failed twice, then succeeded", () => {
  let job: Job;
  let attempts: JobAttemptList["attempts"];
  beforeAll(async () => {
    job = (await api<Job>(server, "GET", `/api/jobs/${(await retried("twice", 2)).id}`)).body;
    attempts = await attemptsOf(job);
  }, 90_000);

  test("REST: one record per attempt, each with its own times, status and error", () => {
    expect(job.status).toBe("succeeded");
    expect(job.attempt).toBe(3);
    expect(job.error).toBeNull();
    expect(attempts.map((a) => [a.attempt, a.status, a.exitCode, a.error])).toEqual([
      [1, "failed", 1, "exit code 1\nboom from run 1"],
      [2, "failed", 1, "exit code 1\nboom from run 2"],
      [3, "succeeded", 0, null],
    ]);
    for (const [i, a] of attempts.entries()) {
      expect(a.endedAt).not.toBeNull();
      expect(a.endedAt ?? 0).toBeGreaterThanOrEqual(a.startedAt);
      const next = attempts[i + 1];
      if (next) expect(next.startedAt).toBeGreaterThanOrEqual(a.endedAt ?? Number.POSITIVE_INFINITY);
    }
  });

  test("REST: the job ran from its first attempt's start to its last one's end", () => {
    expect(job.startedAt).toBe(attempts[0]?.startedAt);
    expect(job.endedAt).toBeGreaterThanOrEqual(attempts[2]?.endedAt ?? Number.POSITIVE_INFINITY);
  });

  test("REST: each attempt has its own usage, and the job's is their sum", () => {
    for (const a of attempts) expect(a.usage.inputTokens ?? 0).toBeGreaterThan(0);
    expect(job.usage.inputTokens).toBe(sumOf(attempts.map((a) => a.usage.inputTokens)));
    expect(job.usage.outputTokens).toBe(sumOf(attempts.map((a) => a.usage.outputTokens)));
    expect(job.usage.cachedInputTokens).toBe(sumOf(attempts.map((a) => a.usage.cachedInputTokens)));
    // The last attempt's cost is claude's own; the failed ones' are estimated from their tokens.
    expect(attempts.map((a) => a.usage.costSource)).toEqual(["estimated", "estimated", "reported"]);
    expect(job.usage.costUsd).toBeCloseTo(sumOf(attempts.map((a) => a.usage.costUsd)), 10);
    expect(job.usage.costSource).toBe("estimated");
  });

  test("REST: the file the job created is created, not modified by a later attempt", async () => {
    const files = (await api<JobFiles>(server, "GET", `/api/jobs/${job.id}/files`)).body.files;
    expect(files.map((f) => [f.path, f.change])).toEqual([["made.txt", "created"]]);
  });

  test("the cost report (what budgets count) has every attempt's tokens and cost", async () => {
    const report = await api<CostReport>(server, "GET", `/api/costs?agent=claude&from=${job.createdAt}&to=${Date.now() + 1000}&groupBy=agent`);
    expect(report.status).toBe(200);
    expect(report.body.totals.jobs).toBe(1);
    expect(report.body.totals.inputTokens).toBe(sumOf(attempts.map((a) => a.usage.inputTokens)));
    expect(report.body.totals.costUsd).toBeCloseTo(sumOf(attempts.map((a) => a.usage.costUsd)), 10);
  });

  test("a new price estimates each attempt again, the reported one kept, and the job's cost is their new sum", async () => {
    const before = attempts.map((a) => a.usage.costUsd ?? 0);
    const price = await api(server, "PUT", "/api/costs/prices", { provider: "anthropic", model: "claude-opus-4-8", inputPerM: 6, outputPerM: 30 });
    expect(price.status).toBe(200);
    const now = await attemptsOf(job);
    const repriced = (await api<Job>(server, "GET", `/api/jobs/${job.id}`)).body;
    expect(now[0]?.usage.costUsd).toBeCloseTo(2 * (before[0] ?? 0), 10);
    expect(now[1]?.usage.costUsd).toBeCloseTo(2 * (before[1] ?? 0), 10);
    expect(now[2]?.usage.costUsd).toBe(before[2]);
    expect(repriced.usage.costUsd).toBeCloseTo(sumOf(now.map((a) => a.usage.costUsd)), 10);
    expect(repriced.usage.costSource).toBe("estimated");
  });

  test("MCP claude_done: the same story, one line per attempt", async () => {
    const client = await connectMcp(server);
    try {
      const text = textOf(await client.callTool({ name: "claude_done", arguments: { job_id: job.id } }));
      expect(text).toMatch(/^listo\n/);
      expect(text).toContain("created: made.txt");
      expect(text).toContain(`${job.usage.inputTokens} tokens in`);
      expect(text).toMatch(/attempt 1: failed · exit 1 · [\d.]+ s · \d+ tokens in .* · boom from run 1\n/);
      expect(text).toMatch(/attempt 2: failed · exit 1 · [\d.]+ s · \d+ tokens in .* · boom from run 2\n/);
      expect(text).toMatch(/attempt 3: succeeded · exit 0 · [\d.]+ s · \d+ tokens in/);
      expect(text).not.toMatch(/boom from run 1[\s\S]*boom from run 1/);
    } finally {
      await client.close();
    }
  });
});

describe("a job that failed all three times", () => {
  let job: Job;
  let attempts: JobAttemptList["attempts"];
  beforeAll(async () => {
    job = await retried("always", 3);
    attempts = await attemptsOf(job);
  }, 90_000);

  test("its error is the last attempt's own, not the three of them", () => {
    expect(job.status).toBe("failed");
    expect(job.error).toBe("exit code 1\nboom from run 3");
    expect(attempts.map((a) => a.error)).toEqual(["exit code 1\nboom from run 1", "exit code 1\nboom from run 2", "exit code 1\nboom from run 3"]);
  });

  test("its tokens are the three attempts' summed", () => {
    expect(attempts).toHaveLength(3);
    expect(job.usage.inputTokens).toBe(sumOf(attempts.map((a) => a.usage.inputTokens)));
    expect(job.usage.inputTokens).toBe(3 * (attempts[0]?.usage.inputTokens ?? 0));
  });

  test("MCP claude_done says the last attempt's error once", async () => {
    const client = await connectMcp(server);
    try {
      const text = textOf(await client.callTool({ name: "claude_done", arguments: { job_id: job.id } }));
      expect(text).toMatch(/^error: exit code 1\n/);
      expect(text.match(/attempt \d: failed/g)).toHaveLength(3);
    } finally {
      await client.close();
    }
  });
});
