import { existsSync } from "node:fs";
import Database from "better-sqlite3";

/**
 * Whether another process (a Corral server, a sqlite3 shell) has the SQLite registry open. The
 * server keeps it in WAL mode, and SQLite removes the -wal file when the last connection to the
 * file closes: a connection that reads and closes while the -wal file stays was not the last.
 * A -wal file left by a crash is checkpointed and removed by that same close.
 */
export function sqliteInUse(file: string): boolean {
  const probe = new Database(file, { fileMustExist: true });
  try {
    probe.prepare("select count(*) from sqlite_schema").get();
  } finally {
    probe.close();
  }
  return existsSync(`${file}-wal`);
}
