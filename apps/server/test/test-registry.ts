// The registry as the server opens it, with two extras for tests: storing jobs directly and
// running a statement no repository makes.
import { openDb } from "../src/db/client.js";
import { openPgDb } from "../src/db/pg/client.js";
import { createPgRegistry } from "../src/db/pg/registry.js";
import * as pgSchema from "../src/db/pg/schema.js";
import type { Registry } from "../src/db/registry.js";
import { createSqliteRegistry } from "../src/db/sqlite-registry.js";
import type { NewJobRow } from "../src/db/registry.js";
import * as sqliteSchema from "../src/db/schema.js";

export interface TestRegistry extends Registry {
  /** Stores jobs as a launch does: what the repositories under test refer to. */
  insertJobs(rows: NewJobRow[]): Promise<void>;
  /** A statement no repository makes (adding an agent, deleting a job), `?` for each parameter. */
  run<T = Record<string, unknown>>(statement: string, params?: unknown[]): Promise<T[]>;
  /** PostgreSQL: the database's URL, for tests that connect to it more than once. */
  url?: string;
}

/** The SQLite registry in `file`, opened (and migrated) as the server opens it. */
export function sqliteRegistryAt(file: string): TestRegistry {
  const handle = openDb(file);
  return {
    ...createSqliteRegistry(handle),
    async insertJobs(rows) {
      handle.db.insert(sqliteSchema.jobs).values(rows).run();
    },
    async run<T>(statement: string, params: unknown[] = []) {
      const prepared = handle.db.$client.prepare(statement);
      if (prepared.reader) return prepared.all(...params) as T[];
      prepared.run(...params);
      return [];
    },
  };
}

/** The PostgreSQL registry at `url`, opened (and migrated) as the server opens it. */
export async function pgRegistryAt(url: string): Promise<TestRegistry> {
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
