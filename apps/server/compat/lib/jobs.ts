// Runs one job over REST against a real client and waits for its end, as the worker suites do.
import { isFinalStatus, type Job } from "@corral/shared";
import { expect } from "vitest";
import { api, until, type TestServer } from "../../test/helpers.js";

/** Launches a job, waits until it has ended (real clients can take a while), and reads its whole output. */
export async function runJob(server: TestServer, agent: string, body: Record<string, unknown>): Promise<{ job: Job; output: string }> {
  const launched = await api<Job>(server, "POST", "/api/jobs", { agent, ...body });
  expect(launched.status, JSON.stringify(launched.body)).toBe(201);
  const job = await until(
    async () => {
      const res = await api<Job>(server, "GET", `/api/jobs/${launched.body.id}`);
      return isFinalStatus(res.body.status) ? res.body : undefined;
    },
    120_000,
    `${agent} job to end`,
  );
  const out = await api<{ chunks: { text: string }[] }>(server, "GET", `/api/jobs/${job.id}/output`);
  return { job, output: out.body.chunks.map((c) => c.text).join("") };
}
