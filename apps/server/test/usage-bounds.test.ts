// A worker's usage is untrusted: one that reports a negative cost and negative token counts (which
// would make a budget's sum less than what was spent) has none of them stored, on either registry,
// and the job still ends as it ran.
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Job } from "@corral/shared";
import { api, startServer, tempDir, type TestServer } from "./helpers.js";

describe("a worker's negative usage", () => {
  const root = tempDir();
  let server: TestServer;

  beforeAll(async () => {
    server = await startServer({}, { root });
  });
  afterAll(async () => server?.close());

  test("is not stored: the job succeeds with no negative cost or tokens", async () => {
    const launched = await api<Job>(server, "POST", "/api/jobs", {
      agent: "claude",
      prompt: "tokens -90000000 -90000000",
      workdir: path.join(root, "w"),
    });
    expect(launched.status).toBe(201);
    const [done] = await server.services.waits.waitFor([launched.body.id], 20_000);
    expect(done).toMatchObject({ status: "succeeded" });
    const job = (await api<Job>(server, "GET", `/api/jobs/${launched.body.id}`)).body;
    for (const value of [job.usage?.inputTokens, job.usage?.outputTokens, job.usage?.costUsd]) {
      expect(value ?? 0).toBeGreaterThanOrEqual(0);
    }
  }, 30_000);
});
