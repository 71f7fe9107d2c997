import { rmSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import type { AgentWithAvailability, Job } from "@corral/shared";
import { afterAll, expect, test } from "vitest";
import { api, startServer, tempDir, type TestServer } from "./helpers.js";

const root = tempDir();
let server: TestServer | undefined;
afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

test("retry policies written before they took camelCase are read in it after the upgrade", async () => {
  server = await startServer({}, { root });
  const created = await api<AgentWithAvailability>(server, "POST", "/api/agents", {
    name: "flaky",
    kind: "command",
    command: "false",
    retry: { maxAttempts: 2, exitCodes: [75], outputPatterns: ["quota"], backoffS: 5 },
  });
  expect(created.status).toBe(201);
  const job = await api<Job>(server, "POST", "/api/jobs", {
    agent: "gemini",
    prompt: "hi",
    workdir: path.join(root, "w"),
    retry: { maxAttempts: 3, backoffS: 0.5 },
  });
  expect(job.status).toBe(201);
  await server.services.jobs.waitFor([job.body.id], 10_000);
  await server.close();
  server = undefined;

  // The registry as the release before wrote it: policies in snake_case, the last migration not yet run.
  const db = new Database(path.join(root, "data", "corral.db"));
  const old = (policy: object) => JSON.stringify(policy);
  db.prepare("update agents set retry = ? where name = 'flaky'").run(
    old({ max_attempts: 2, exit_codes: [75], output_patterns: ["quota"], backoff_s: 5 }),
  );
  db.prepare("update jobs set retry = ? where id = ?").run(
    old({ max_attempts: 3, exit_codes: [], output_patterns: [], backoff_s: 0.5 }),
    job.body.id,
  );
  db.prepare("delete from __drizzle_migrations where created_at = (select max(created_at) from __drizzle_migrations)").run();
  db.close();

  server = await startServer({}, { root });
  const agent = await api<AgentWithAvailability>(server, "GET", "/api/agents/flaky");
  expect(agent.body.retry).toEqual({ maxAttempts: 2, exitCodes: [75], outputPatterns: ["quota"], backoffS: 5 });
  const upgraded = await api<Job>(server, "GET", `/api/jobs/${job.body.id}`);
  expect(upgraded.status).toBe(200);
  expect(upgraded.body.retry).toEqual({ maxAttempts: 3, exitCodes: [], outputPatterns: [], backoffS: 0.5 });
  const gemini = await api<AgentWithAvailability>(server, "GET", "/api/agents/gemini");
  expect(gemini.body.retry?.maxAttempts).toBe(3);
});
