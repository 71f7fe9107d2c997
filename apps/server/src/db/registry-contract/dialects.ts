// The registry in each dialect, fresh and migrated, for the contract tests: the same cases run
// against both (`describe.each(DIALECTS)`). The SQLite repositories are wrapped to answer Promises
// as the PostgreSQL ones do.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { usePostgres } from "../../../test/postgres.js";
import type { Async } from "../async.js";
import { openDb } from "../client.js";
import { openPgDb, type PgExecutor } from "../pg/client.js";
import { AgentRowCache, createPgAgentsRepo } from "../pg/repos/agents.js";
import { createPgAuditRepo } from "../pg/repos/audit.js";
import { createPgCostsRepo } from "../pg/repos/costs.js";
import { createPgJobFilesRepo } from "../pg/repos/job-files.js";
import { createPgJobMessagesRepo } from "../pg/repos/job-messages.js";
import { createPgJobStatsRepo } from "../pg/repos/job-stats.js";
import { createPgMcpTasksRepo } from "../pg/repos/mcp-tasks.js";
import { createPgOllamaModelsRepo } from "../pg/repos/ollama-models.js";
import { createPgSessionsRepo } from "../pg/repos/sessions.js";
import * as pgSchema from "../pg/schema.js";
import { createAgentsRepo } from "../repos/agents.js";
import { createAuditRepo } from "../repos/audit.js";
import { createCostsRepo } from "../repos/costs.js";
import { createJobFilesRepo } from "../repos/job-files.js";
import { createJobMessagesRepo } from "../repos/job-messages.js";
import { createJobStatsRepo } from "../repos/job-stats.js";
import type { NewJobRow } from "../repos/jobs.js";
import { createMcpTasksRepo } from "../repos/mcp-tasks.js";
import { createOllamaModelsRepo } from "../repos/ollama-models.js";
import { createSessionsRepo } from "../repos/sessions.js";
import * as sqliteSchema from "../schema.js";
import type { Db } from "../client.js";

const sqliteFactories = (db: Db) => ({
  agents: createAgentsRepo(db),
  audit: createAuditRepo(db),
  costs: createCostsRepo(db),
  jobFiles: createJobFilesRepo(db),
  jobMessages: createJobMessagesRepo(db),
  jobStats: createJobStatsRepo(db),
  mcpTasks: createMcpTasksRepo(db),
  ollamaModels: createOllamaModelsRepo(db),
  sessions: createSessionsRepo(db),
});

export type Repos = { [K in keyof ReturnType<typeof sqliteFactories>]: Async<ReturnType<typeof sqliteFactories>[K]> };

export interface TestRegistry extends Repos {
  /** All of fn's writes stored, or none. */
  transaction<T>(fn: (tx: Repos) => Promise<T>): Promise<T>;
  /** Stores jobs as a launch does: what the repositories under test refer to. */
  insertJobs(rows: NewJobRow[]): Promise<void>;
  close(): Promise<void>;
}

const asAsync = <R extends object>(repo: R): Async<R> =>
  Object.fromEntries(
    Object.entries(repo).map(([key, value]) => [key, typeof value === "function" ? async (...args: unknown[]) => value(...args) : value]),
  ) as Async<R>;

export async function sqliteRepos(): Promise<TestRegistry> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "corral-contract-"));
  const handle = openDb(path.join(dir, "corral.db"));
  const sqlite = handle.db.$client;
  const repos = Object.fromEntries(Object.entries(sqliteFactories(handle.db)).map(([name, repo]) => [name, asAsync(repo)])) as Repos;
  return {
    ...repos,
    // The repositories answer at once, so nothing else runs between begin and commit.
    async transaction(fn) {
      sqlite.exec("begin");
      try {
        const result = await fn(repos);
        sqlite.exec("commit");
        return result;
      } catch (err) {
        sqlite.exec("rollback");
        throw err;
      }
    },
    async insertJobs(rows) {
      handle.db.insert(sqliteSchema.jobs).values(rows).run();
    },
    async close() {
      handle.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const postgres = usePostgres();

export async function pgRepos(): Promise<TestRegistry> {
  // A user's database collates text by its locale, where SQLite compares bytes: the repositories must not care.
  const { db, close } = await openPgDb(await postgres.database({ icuLocale: "en-US" }));
  const agentRows = new AgentRowCache();
  const build = (on: PgExecutor): Repos => ({
    agents: createPgAgentsRepo(on, agentRows),
    audit: createPgAuditRepo(on),
    costs: createPgCostsRepo(on),
    jobFiles: createPgJobFilesRepo(on),
    jobMessages: createPgJobMessagesRepo(on),
    jobStats: createPgJobStatsRepo(on),
    mcpTasks: createPgMcpTasksRepo(on),
    ollamaModels: createPgOllamaModelsRepo(on),
    sessions: createPgSessionsRepo(on),
  });
  return {
    ...build(db),
    async transaction(fn) {
      try {
        return await db.transaction((tx) => fn(build(tx)));
      } finally {
        // Its agent writes are seen by the pool from the commit on: rows read in between are stale.
        agentRows.forget();
      }
    },
    async insertJobs(rows) {
      await db.insert(pgSchema.jobs).values(rows.map(({ seq: _seq, ...row }) => row));
    },
    close,
  };
}

/** Each dialect the registry can live in; PostgreSQL where it is installed (usePostgres says when it is not). */
export const DIALECTS = [{ dialect: "SQLite", open: sqliteRepos }, ...(postgres.available ? [{ dialect: "PostgreSQL", open: pgRepos }] : [])];
