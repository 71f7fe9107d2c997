// The registry in each dialect, fresh and migrated, for the contract tests: the same cases run
// against both (`describe.each(DIALECTS)`), through the Registry the server itself opens.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { usePostgres } from "../../../test/postgres.js";
import { openDb } from "../client.js";
import { openPgDb } from "../pg/client.js";
import { createPgRegistry } from "../pg/registry.js";
import * as pgSchema from "../pg/schema.js";
import { createSqliteRegistry, type Registry } from "../registry.js";
import type { NewJobRow } from "../repos/jobs.js";
import * as sqliteSchema from "../schema.js";

export interface TestRegistry extends Registry {
  /** Stores jobs as a launch does: what the repositories under test refer to. */
  insertJobs(rows: NewJobRow[]): Promise<void>;
  /** A statement no repository makes (adding an agent, deleting a job), `?` for each parameter. */
  run<T = Record<string, unknown>>(statement: string, params?: unknown[]): Promise<T[]>;
  /** PostgreSQL: the database's URL, for tests that connect to it more than once. */
  url?: string;
}

export async function sqliteRepos(): Promise<TestRegistry> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "corral-contract-"));
  const handle = openDb(path.join(dir, "corral.db"));
  const registry = createSqliteRegistry(handle);
  return {
    ...registry,
    async insertJobs(rows) {
      handle.db.insert(sqliteSchema.jobs).values(rows).run();
    },
    async run<T>(statement: string, params: unknown[] = []) {
      const prepared = handle.db.$client.prepare(statement);
      if (prepared.reader) return prepared.all(...params) as T[];
      prepared.run(...params);
      return [];
    },
    async close() {
      await registry.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const postgres = usePostgres();

export async function pgRepos(): Promise<TestRegistry> {
  // A user's database collates text by its locale, where SQLite compares bytes: the repositories must not care.
  const url = await postgres.database({ icuLocale: "en-US" });
  const handle = await openPgDb(url);
  const { db } = handle;
  return {
    ...createPgRegistry(handle),
    url,
    async insertJobs(rows) {
      await db.insert(pgSchema.jobs).values(rows.map(({ seq: _seq, ...row }) => row));
    },
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

/** Each dialect the registry can live in; PostgreSQL where it is installed (usePostgres says when it is not). */
export const DIALECTS = [{ dialect: "SQLite", open: sqliteRepos }, ...(postgres.available ? [{ dialect: "PostgreSQL", open: pgRepos }] : [])];
