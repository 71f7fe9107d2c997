import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { drizzle } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import type { AgentWithAvailability, Job, JobList } from "@corral/shared";
import { afterEach, expect, test } from "vitest";
import { api, startServer, tempDir, type TestServer } from "./helpers.js";
import { registryOnPostgres } from "./postgres.js";

// Upgrades of an SQLite file written by an older version (PostgreSQL's migrations are checked in db/pg/schema.test.ts).
const upgrade = test.skipIf(registryOnPostgres);

const migrationsFolder = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../drizzle");

const roots: string[] = [];
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A registry as the release whose last migration was `lastTag` left it: the later migrations not yet run. */
function registryAt(root: string, lastTag: string): Database.Database {
  const folder = path.join(root, `migrations-${lastTag}`);
  mkdirSync(path.join(folder, "meta"), { recursive: true });
  const journal = JSON.parse(readFileSync(path.join(migrationsFolder, "meta/_journal.json"), "utf8")) as { entries: { tag: string }[] };
  const last = journal.entries.findIndex((e) => e.tag === lastTag);
  if (last < 0) throw new Error(`no migration ${lastTag}`);
  journal.entries = journal.entries.slice(0, last + 1);
  writeFileSync(path.join(folder, "meta/_journal.json"), JSON.stringify(journal));
  for (const { tag } of journal.entries) copyFileSync(path.join(migrationsFolder, `${tag}.sql`), path.join(folder, `${tag}.sql`));
  mkdirSync(path.join(root, "data"), { recursive: true });
  const sqlite = new Database(path.join(root, "data", "corral.db"));
  migrate(drizzle(sqlite), { migrationsFolder: folder });
  return sqlite;
}

function newRoot(): string {
  const root = tempDir();
  roots.push(root);
  return root;
}

const agentRow = (name: string, retry: object | null) => ({
  name,
  kind: "command",
  provider: "local",
  workdir: "/tmp",
  command: "false",
  retry: retry && JSON.stringify(retry),
});

function insertAgent(db: Database.Database, row: ReturnType<typeof agentRow>): void {
  db.prepare(
    `insert into agents (name, kind, provider, workdir, timeout_s, max_concurrent, env, enabled, command, args, retry, builtin, created_at, updated_at)
     values (@name, @kind, @provider, @workdir, 60, 1, '{}', 1, @command, '[]', @retry, 0, 0, 0)`,
  ).run(row);
}

function insertJob(
  db: Database.Database,
  job: { id: string; agent: string; prompt: string; createdAt: number; error?: string; retry?: object },
): void {
  db.prepare(
    `insert into jobs (id, agent, status, prompt, workdir, timeout_s, origin, error, retry, created_at, ended_at)
     values (@id, @agent, @status, @prompt, '/tmp', 60, 'rest', @error, @retry, @createdAt, @createdAt)`,
  ).run({ ...job, status: job.error ? "failed" : "succeeded", error: job.error ?? null, retry: job.retry ? JSON.stringify(job.retry) : null });
}

upgrade("retry policies written before they took camelCase are read in it after the upgrade", async () => {
  const root = newRoot();
  const db = registryAt(root, "0006_browser_sessions");
  insertAgent(db, agentRow("flaky", { max_attempts: 2, exit_codes: [75], output_patterns: ["quota"], backoff_s: 5 }));
  insertJob(db, {
    id: "aaaaaa000001",
    agent: "flaky",
    prompt: "hi",
    createdAt: 1_000,
    retry: { max_attempts: 3, exit_codes: [], output_patterns: [], backoff_s: 0.5 },
  });
  db.close();

  server = await startServer({}, { root });
  const agent = await api<AgentWithAvailability>(server, "GET", "/api/agents/flaky");
  expect(agent.body.retry).toEqual({ maxAttempts: 2, exitCodes: [75], outputPatterns: ["quota"], backoffS: 5 });
  const upgraded = await api<Job>(server, "GET", "/api/jobs/aaaaaa000001");
  expect(upgraded.status).toBe(200);
  expect(upgraded.body.retry).toEqual({ maxAttempts: 3, exitCodes: [], outputPatterns: [], backoffS: 0.5 });
  const gemini = await api<AgentWithAvailability>(server, "GET", "/api/agents/gemini");
  expect(gemini.body.retry?.maxAttempts).toBe(3);
});

upgrade("jobs stored before the jobs list had its indexes are listed newest first and found by text after the upgrade", async () => {
  const root = newRoot();
  const db = registryAt(root, "0007_retry_policies_in_camel_case");
  insertAgent(db, agentRow("old", null));
  // Written out of creation order: the upgrade numbers them by creation time.
  insertJob(db, { id: "aaaaaa000002", agent: "old", prompt: "second: fix the Parser", createdAt: 2_000 });
  insertJob(db, { id: "aaaaaa000001", agent: "old", prompt: "first: write docs", createdAt: 1_000, error: "exit code 3: Boom" });
  insertJob(db, { id: "aaaaaa000003", agent: "old", prompt: "third: parse it again", createdAt: 3_000 });
  db.close();

  server = await startServer({}, { root });
  const ids = async (query: string) => (await api<JobList>(server!, "GET", `/api/jobs?${query}`)).body.jobs.map((j) => j.id);
  expect(await ids("agent=old")).toEqual(["aaaaaa000003", "aaaaaa000002", "aaaaaa000001"]);
  expect(await ids("q=PARSE")).toEqual(["aaaaaa000003", "aaaaaa000002"]);
  expect(await ids("q=boom")).toEqual(["aaaaaa000001"]);
  expect(await ids("q=000002")).toEqual(["aaaaaa000002"]);
  expect(await ids("q=oM")).toEqual(["aaaaaa000001"]);

  // A job added after the upgrade comes first and is found the same way.
  const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "old", prompt: "fourth: parse once more", workdir: path.join(root, "w") });
  expect(launched.status).toBe(201);
  expect(await ids("q=parse")).toEqual([launched.body.id, "aaaaaa000003", "aaaaaa000002"]);
});

upgrade("jobs the server ran before it became the runner local are local's after the upgrade; one waiting for a runner stays unclaimed", async () => {
  const root = newRoot();
  const db = registryAt(root, "0019_runner_requests");
  insertAgent(db, agentRow("old", null));
  insertAgent(db, agentRow("gpu_agent", null));
  db.prepare("update agents set runner_label = 'gpu' where name = 'gpu_agent'").run();
  insertJob(db, { id: "aaaaaa000001", agent: "old", prompt: "ran here", createdAt: 1_000 });
  insertJob(db, { id: "aaaaaa000002", agent: "gpu_agent", prompt: "ran here before its label", createdAt: 2_000, error: "exit code 1" });
  insertJob(db, { id: "aaaaaa000003", agent: "gpu_agent", prompt: "waits for a runner", createdAt: 3_000 });
  insertJob(db, { id: "aaaaaa000004", agent: "gpu_agent", prompt: "a runner ran it", createdAt: 4_000 });
  db.prepare("update jobs set status = 'queued', ended_at = null where id = 'aaaaaa000003'").run();
  db.prepare("update jobs set runner = 'box-1234' where id = 'aaaaaa000004'").run();
  // It ran (here, before its agent was given a label): a job that never started stays unclaimed.
  db.prepare("update jobs set started_at = 1500 where id = 'aaaaaa000002'").run();
  db.close();

  server = await startServer({}, { root });
  const runnerOf = async (id: string) => (await api<Job>(server!, "GET", `/api/jobs/${id}`)).body.runner;
  expect(await runnerOf("aaaaaa000001")).toBe("local");
  expect(await runnerOf("aaaaaa000002")).toBe("local");
  expect(await runnerOf("aaaaaa000003")).toBeNull();
  expect(await runnerOf("aaaaaa000004")).toBe("box-1234");
});
