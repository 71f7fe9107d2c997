// What SQLite does its own way, for the repositories (../dialect.ts). One connection serves the
// whole registry and sqlite-registry.ts runs one registry call at a time on it, so a repository's
// statements are never interleaved with another call's: locks have nothing to add, and numbers
// commit in the order they are drawn.
import { inArray, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import type { RunResult } from "better-sqlite3";
import type { Db as SqliteDb } from "../client.js";
import type { Db, Dialect, Preparable, Tables } from "../dialect.js";
import * as schema from "../schema.js";
import { createSqliteJobPage } from "./sqlite-job-list.js";

/** The SQLite tables, typed as the repositories see them: the same columns and rows (schema-rows.test.ts). */
const tables = schema as unknown as Tables;

/** What a statement prepared by drizzle's SQLite driver runs with: its own method (all, get or run). */
interface SqlitePrepared {
  execute(params?: Record<string, unknown>): { sync(): unknown };
}

/** SQLite's JSON text of a row's value, for `rowSource`'s columns: text stays text, numbers numbers. */
const jsonColumn = (index: number) => sql.raw(`value ->> ${index}`);

/**
 * The SQLite dialect on `db`. `inTransaction`: this one runs inside a registry transaction (the
 * registry opens one dialect for its transactions and one for the calls outside them).
 */
export function sqliteDialect(db: SqliteDb, { inTransaction = false }: { inTransaction?: boolean } = {}): Dialect {
  const dialect: Dialect = {
    db: db as unknown as Db,
    tables,
    inTransaction,
    changes: (result) => (result as RunResult).changes,
    rows: async <T>(query: SQL) => db.all<T>(query),
    run: async (query) => db.run(query),
    prepare<R>(build: (db: Db) => Preparable<R>) {
      // Prepared on first use, once: building and preparing a statement costs more than running it.
      let statement: SqlitePrepared | undefined;
      return async (params) => {
        statement ??= (build(db as unknown as Db) as unknown as { prepare(): SqlitePrepared }).prepare();
        return statement.execute(params).sync() as R;
      };
    },
    async atomic(fn) {
      // A savepoint nests inside the registry's transaction, or opens one of its own outside it.
      db.run(sql`savepoint corral_atomic`);
      try {
        const result = await fn(dialect);
        db.run(sql`release corral_atomic`);
        return result;
      } catch (err) {
        if (db.$client.inTransaction) {
          db.run(sql`rollback to corral_atomic`);
          db.run(sql`release corral_atomic`);
        }
        throw err;
      }
    },
    inOrder: (_identity, insert) => insert(dialect),
    lock: async () => {},
    skipLocked: (query) => query,
    notify: async () => {},
    // BINARY, its default collation, is this already.
    bytewise: (text) => sql`${text}`,
    jsonText: (column, key) => sql<string | null>`json_extract(${column}, ${`$.${key}`})`,
    storable: (value) => value,
    wholeNumber: (value) => sql<number>`${value}`.mapWith(Number),
    // SQLite adds floating-point values with a compensated sum already.
    sumOfDollars: (value) => sql<number | null>`sum(${value})`,
    localDay: (ms: SQLWrapper) => sql<string>`strftime('%Y-%m-%d', ${ms} / 1000, 'unixepoch', 'localtime')`,
    oneOf: (column, values) => inArray(column as Parameters<typeof inArray>[0], [...values]),
    // One JSON array of rows, each an array of its columns: SQLite takes at most 32,766 parameters a statement.
    rowSource(columns, rows) {
      const selected = Object.keys(columns).map((name, i) => sql`${jsonColumn(i)} as ${sql.identifier(name)}`);
      return sql`(select ${sql.join(selected, sql`, `)} from json_each(${JSON.stringify(rows)}))`;
    },
    jobPage: async (query) => jobPage(query),
  };
  const jobPage = createSqliteJobPage(db);
  return dialect;
}
