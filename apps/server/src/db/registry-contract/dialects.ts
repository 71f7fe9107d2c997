// The registry in each dialect, fresh and migrated, for the contract tests: the same cases run
// against both (`describe.each(DIALECTS)`). The SQLite repositories are wrapped to answer Promises
// as the PostgreSQL ones do.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { usePostgres } from "../../../test/postgres.js";
import type { Async } from "../async.js";
import { openDb } from "../client.js";
import { openPgDb, type PgDb } from "../pg/client.js";
import { createPgConversationsRepo } from "../pg/repos/conversations.js";
import { createPgJobsRepo } from "../pg/repos/jobs.js";
import { type ConversationsRepo, createConversationsRepo } from "../repos/conversations.js";
import { createJobsRepo, type JobsRepo } from "../repos/jobs.js";

export interface TestRegistry {
  jobs: Async<JobsRepo>;
  conversations: Async<ConversationsRepo>;
  /** A statement no repository makes (adding an agent, deleting a job), `?` for each parameter. */
  run<T = Record<string, unknown>>(statement: string, params?: unknown[]): Promise<T[]>;
  /** PostgreSQL: the database's URL, for tests that connect to it more than once. */
  url?: string;
  close(): Promise<void>;
}

const asAsync = <R extends object>(repo: R): Async<R> =>
  Object.fromEntries(
    Object.entries(repo).map(([key, value]) => [key, typeof value === "function" ? async (...args: unknown[]) => value(...args) : value]),
  ) as Async<R>;

export async function sqliteRepos(): Promise<TestRegistry> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "corral-contract-"));
  const { db, close } = openDb(path.join(dir, "corral.db"));
  return {
    jobs: asAsync(createJobsRepo(db)),
    conversations: asAsync(createConversationsRepo(db)),
    async run<T>(statement: string, params: unknown[] = []) {
      const prepared = db.$client.prepare(statement);
      if (prepared.reader) return prepared.all(...params) as T[];
      prepared.run(...params);
      return [];
    },
    async close() {
      close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const postgres = usePostgres();

export function pgReposOn(db: PgDb): Omit<TestRegistry, "close" | "url"> {
  return {
    jobs: createPgJobsRepo(db),
    conversations: createPgConversationsRepo(db),
    async run<T>(statement: string, params: unknown[] = []) {
      let n = 0;
      const { rows } = await db.$client.query(
        statement.replace(/\?/g, () => `$${++n}`),
        params,
      );
      return rows as T[];
    },
  };
}

export async function pgRepos(): Promise<TestRegistry> {
  const url = await postgres.database();
  const { db, close } = await openPgDb(url);
  return { ...pgReposOn(db), url, close };
}

/** Each dialect the registry can live in; PostgreSQL where it is installed (usePostgres says when it is not). */
export const DIALECTS = [{ dialect: "SQLite", open: sqliteRepos }, ...(postgres.available ? [{ dialect: "PostgreSQL", open: pgRepos }] : [])];
