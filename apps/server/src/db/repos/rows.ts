/** The row an `insert … returning` stored: the database answers one per row inserted, or raised an error. */
export function stored<T>(rows: T[]): T {
  const [row] = rows;
  if (row === undefined) throw new Error("the registry returned no row for an insert");
  return row;
}

/** Of several entries for one key, the last: what a write that applies them one by one keeps. */
export function lastOfEach<T>(rows: readonly T[], key: (row: T) => string): T[] {
  return [...new Map(rows.map((row) => [key(row), row])).values()];
}
