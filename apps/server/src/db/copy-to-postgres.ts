// `pnpm registry:copy`'s copy: every table of the SQLite registry into an empty registry in
// PostgreSQL, through the two drizzle schemas (which mirror each other column by column), in one
// PostgreSQL transaction so that a failure leaves the target as empty as it was.
import { count, getTableColumns, getTableName, sql } from "drizzle-orm";
import type { PgTable } from "drizzle-orm/pg-core";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Db } from "./client.js";
import type { PgDb, PgExecutor } from "./pg/client.js";
import { withoutNul } from "./pg/nul.js";
import * as pg from "./pg/schema.js";
import * as sqlite from "./schema.js";

/**
 * Parents before the tables that refer to them (jobs name an agent; attempts, files, messages,
 * output and MCP tasks name a job; browsing requests a runner). The FTS index and drizzle's migrations are SQLite's own: the
 * PostgreSQL registry indexes its text itself and has its own migrations.
 */
const TABLES: [SQLiteTable, PgTable][] = [
  [sqlite.agents, pg.agents],
  [sqlite.jobs, pg.jobs],
  [sqlite.jobAttempts, pg.jobAttempts],
  [sqlite.jobFileChanges, pg.jobFileChanges],
  [sqlite.jobMessages, pg.jobMessages],
  [sqlite.jobOutput, pg.jobOutput],
  [sqlite.mcpTasks, pg.mcpTasks],
  [sqlite.auditLog, pg.auditLog],
  [sqlite.priceOverrides, pg.priceOverrides],
  [sqlite.budgets, pg.budgets],
  [sqlite.ollamaModels, pg.ollamaModels],
  [sqlite.browserSessions, pg.browserSessions],
  [sqlite.hubAgents, pg.hubAgents],
  [sqlite.hubMessages, pg.hubMessages],
  [sqlite.runners, pg.runners],
  // Browsing requests to runners (PostgreSQL only): an SQLite registry has none, but no table is left out.
  [sqlite.runnerRequests, pg.runnerRequests],
];

/** Identity columns the copied rows set explicitly: their sequences must continue after the copied values. */
const NUMBERED: [table: string, column: string][] = [
  ["jobs", "seq"],
  ["audit_log", "id"],
  ["hub_messages", "id"],
  ["budgets", "id"],
];

/** PostgreSQL takes at most 65,535 parameters in one statement: a batch stays under it. */
const MAX_PARAMETERS = 60_000;
/** Rows read from SQLite at once, so a large job_output table is never held whole. */
const MAX_BATCH = 2_000;

/** The copy was refused before anything was written. */
export class CopyRefusedError extends Error {}

/** A table's rows could not be stored (PostgreSQL's reason, with its detail): the copy was rolled back. */
export class TableCopyError extends Error {
  constructor(table: string, err: unknown) {
    // drizzle wraps PostgreSQL's error in one that quotes the statement and every parameter (a batch of rows).
    const reason = err instanceof Error && err.cause instanceof Error ? err.cause : err;
    const detail = (reason as { detail?: unknown }).detail;
    super(
      `Copying ${table} failed, so nothing was copied (the target is as empty as before): ${reason instanceof Error ? reason.message : String(reason)}${typeof detail === "string" ? ` (${detail})` : ""}`,
      { cause: err },
    );
  }
}

export interface TableCopied {
  table: string;
  rows: number;
}

/** How far the copy of one table has come: `rows` of its `of` stored so far (told after each batch). */
export interface TableProgress {
  table: string;
  rows: number;
  of: number;
}

/** The tables the copy writes, in its order: what it reports. */
export const copiedTables = (): string[] => TABLES.map(([, target]) => getTableName(target));

export interface CopyOptions {
  /** Hears each table once it is copied. */
  onTable?: (copied: TableCopied) => void;
  /** Hears a table's progress after each batch of its rows (a table without rows has none). */
  onProgress?: (progress: TableProgress) => void;
  /** The commands that give the target an empty database, for the refusal to name. */
  emptyDatabase?: string;
}

/**
 * Copies every row of `source` into `target`, which must hold no Corral data. All or nothing: any
 * failure rolls the whole copy back.
 */
export async function copyToPostgres(source: Db, target: PgDb, options: CopyOptions = {}): Promise<TableCopied[]> {
  // One read transaction: every table is read as of one moment, even if something wrote meanwhile.
  const reading = source.$client;
  reading.exec("begin");
  try {
    return await target.transaction(async (tx) => {
      await refuseNonEmpty(tx, options.emptyDatabase ?? "dropdb <database> && createdb --owner <user> <database>");
      const copied: TableCopied[] = [];
      for (const [from, to] of TABLES) {
        const table = getTableName(to);
        const rows = await copyTable(source, from, tx, to, (done, of) => options.onProgress?.({ table, rows: done, of })).catch((err: unknown) => {
          throw new TableCopyError(table, err);
        });
        copied.push({ table, rows });
        options.onTable?.({ table, rows });
      }
      for (const [table, column] of NUMBERED) await continueNumbering(tx, table, column);
      return copied;
    });
  } finally {
    reading.exec("rollback");
  }
}

/**
 * A server started on the target adds the built-in agents at once, and a registry in use has jobs:
 * copying into either would mix two registries (and collide on their names).
 */
async function refuseNonEmpty(tx: PgExecutor, emptyDatabase: string): Promise<void> {
  const holding: string[] = [];
  for (const [, table] of TABLES) {
    const name = getTableName(table);
    const { rows } = await tx.execute<{ found: boolean }>(sql`select exists (select 1 from ${sql.identifier(name)}) as found`);
    if (rows[0]?.found) holding.push(name);
  }
  if (holding.length) {
    throw new CopyRefusedError(
      `The PostgreSQL registry already holds Corral data (${holding.join(", ")}); nothing was copied. ` +
        "The copy must run before any Corral server starts on it (a server adds its built-in agents at its first start). " +
        `Give it an empty database (${emptyDatabase}), then run pnpm registry:copy again.`,
    );
  }
}

async function copyTable(source: Db, from: SQLiteTable, tx: PgExecutor, to: PgTable, progress: (rows: number, of: number) => void): Promise<number> {
  const columns = getTableColumns(from);
  const batch = Math.min(MAX_BATCH, Math.floor(MAX_PARAMETERS / Object.keys(columns).length));
  // Counted in the same read transaction as the pages: exactly the rows that will be copied.
  const of = source.select({ n: count() }).from(from).get()?.n ?? 0;
  let after = Number.MIN_SAFE_INTEGER;
  let copied = 0;
  for (;;) {
    // Paged by rowid (every Corral table has one): each page is an index seek, not an offset walk.
    const page = source
      .select({ rowid: sql<number>`rowid`, row: columns })
      .from(from)
      .where(sql`rowid > ${after}`)
      .orderBy(sql`rowid`)
      .limit(batch)
      .all() as { rowid: number; row: Record<string, unknown> }[];
    if (!page.length) return copied;
    // PostgreSQL refuses U+0000 in text and jsonb: stored as U+FFFD, as its repositories store it.
    const rows = page.map((p) => withoutNul(p.row));
    // overridingSystemValue: jobs.seq is an identity PostgreSQL always generates; here it is copied.
    await tx.insert(to).overridingSystemValue().values(rows);
    copied += page.length;
    after = page[page.length - 1]?.rowid ?? after;
    progress(copied, of);
  }
}

/** The next number PostgreSQL hands out is one past the largest copied (1 when none was). */
async function continueNumbering(tx: PgExecutor, table: string, column: string): Promise<void> {
  await tx.execute(
    sql`select setval(pg_get_serial_sequence(${table}, ${column}), coalesce(max(${sql.identifier(column)}), 0) + 1, false) from ${sql.identifier(table)}`,
  );
}
