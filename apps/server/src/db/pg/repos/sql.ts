import { sql, type SQL, type SQLWrapper } from "drizzle-orm";

/**
 * Text compared as SQLite compares it: byte by byte (its BINARY collation over UTF-8). A
 * PostgreSQL database's own collation follows its locale ("a" < "B" < "é" under en_US, where
 * SQLite has "B" < "a" < "é"), so every ordering or range of text says this.
 */
export const bytewise = (text: SQLWrapper): SQL => sql`${text} collate "C"`;

/** The row an `insert … returning` stored: PostgreSQL answers one per row inserted, or raised an error. */
export function stored<T>(rows: T[]): T {
  const [row] = rows;
  if (row === undefined) throw new Error("PostgreSQL returned no row for an insert");
  return row;
}

/** Of several entries for one key, the last: what SQLite keeps when it applies them one by one. */
export function lastOfEach<T>(rows: readonly T[], key: (row: T) => string): T[] {
  return [...new Map(rows.map((row) => [key(row), row])).values()];
}
