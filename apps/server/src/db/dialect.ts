// What the two databases that can hold the registry do differently, behind one interface: each
// repository (repos/*.ts) is written once against a Dialect, and dialects/sqlite.ts and
// dialects/postgres.ts are the only places that know which database answers.
import type { JobListQuery } from "@corral/shared";
import type { SQL, SQLWrapper } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import type * as pgTables from "./pg/schema.js";

/**
 * The tables, as the repositories see them. The two schema files declare the same tables,
 * columns and row types (schema-rows.test.ts checks the rows are equal), so the repositories are
 * typed once, against PostgreSQL's declarations; the SQLite dialect hands its own tables, cast.
 */
export type Tables = typeof pgTables;

/**
 * The query builder the repositories write statements with: the builder methods both drizzle
 * dialects share (select, insert, update, delete and their clauses), each awaited. What a write
 * without `returning` answers differs (`Dialect.changes` reads it). PostgreSQL's own statements
 * and transactions are left out of the type (the Dialect's `rows`, `run` and `atomic` serve both);
 * a PostgreSQL-only clause (`for update`) would still typecheck, so it goes through `skipLocked`.
 */
export type Db = Omit<PgDatabase<PgQueryResultHKT, Record<string, never>>, "execute" | "transaction" | "$count">;

/** A statement built with `sql.placeholder`s, prepared once (SQLite) and run with their values. */
export type Prepared<R> = (params: Record<string, unknown>) => Promise<R>;

/** A query that can be prepared: what it answers when run. */
export type Preparable<R> = { prepare(name: string): { execute(params?: Record<string, unknown>): Promise<R> } };

/** A column's type in a set of rows sent as one parameter (Dialect.rowSource). */
export type ColumnType = "text" | "bigint" | "float8";

/** Identities whose numbers readers take as commit order: a reader asks "after the last one I saw". */
export type OrderedIdentity = "jobs" | "hubMessages";

/** Who is told of a change, through PostgreSQL's NOTIFY (SQLite has no runners to tell). */
export type Channel = "queue" | "cancel" | "request" | "answer" | "job";

/** A page of the jobs list: the seqs of the page, newest first, and how many jobs match. */
export interface JobPage {
  page: number[];
  total: number;
  /** True when `total` is where a text search stopped counting: there are more matches. */
  totalCapped: boolean;
}

export interface Dialect {
  readonly db: Db;
  readonly tables: Tables;
  /** This dialect runs inside a registry transaction: its reads see writes that may still roll back. */
  readonly inTransaction: boolean;

  /** How many rows an insert, update or delete without `returning` touched. */
  changes(result: unknown): number;
  /** The rows of a statement no builder writes (a recursive CTE, a window). */
  rows<T>(query: SQL): Promise<T[]>;
  /** A write no builder writes; what it answers goes to `changes`. */
  run(query: SQL): Promise<unknown>;
  /** `build`'s statement prepared once, on first use. SQLite reuses the prepared statement; PostgreSQL builds the statement once and parses it at each run. */
  prepare<R>(build: (db: Db) => Preparable<R>): Prepared<R>;

  /**
   * Runs `fn`'s statements all or none: a savepoint (PostgreSQL: its own transaction, a savepoint
   * inside the registry's). No other registry call's statement runs between them (SQLite: the
   * registry runs one call at a time; PostgreSQL: as far as `lock` and row locks say).
   */
  atomic<T>(fn: (dialect: Dialect) => Promise<T>): Promise<T>;
  /** Runs an insert that draws the next number of `identity` so that numbers commit in the order they were drawn. */
  inOrder<T>(identity: OrderedIdentity, insert: (dialect: Dialect) => Promise<T>): Promise<T>;
  /** Inside `atomic`: waits until no other process holds `name`'s lock for `key`, and holds it until `atomic` ends. */
  lock(name: "agentClaims", key: string): Promise<void>;
  /** A select of rows to update that passes over rows another transaction holds, rather than waiting for them. */
  skipLocked<Q>(query: Q): Q;
  /** Tells the listeners of `channel` (when the transaction commits, inside one). */
  notify(channel: Channel, payload: string): Promise<void>;

  /** Text compared byte by byte, as SQLite's BINARY collation compares UTF-8. */
  bytewise(text: SQLWrapper): SQL;
  /** A JSON column's top-level `key`, as text (null where the column or the key is). */
  jsonText(column: SQLWrapper, key: string): SQL<string | null>;
  /** A value from outside (a worker's output, a model's tool call) as the database can store it. */
  storable<T>(value: T): T;
  /** A count or a sum of integers, as a number. */
  wholeNumber(value: SQL): SQL<number>;
  /** A sum of dollar amounts as SQLite adds them (ten $0.10 jobs cost $1); null over no rows. */
  sumOfDollars(value: SQL): SQL<number | null>;
  /** The Corral server's local calendar day (YYYY-MM-DD) of a time in milliseconds, as budgets count it. */
  localDay(ms: SQLWrapper): SQL<string>;
  /** `column` is one of `values`, however many (one parameter where the dialect can). */
  oneOf(column: SQLWrapper, values: readonly string[]): SQL;
  /** Rows as a table with the given columns, sent as one parameter whatever their number. */
  rowSource(columns: Record<string, ColumnType>, rows: readonly (readonly unknown[])[]): SQL;

  /** The jobs list's page (its filters, text search and total): each database has its own text index. */
  jobPage(query: JobListQuery): Promise<JobPage>;
}
