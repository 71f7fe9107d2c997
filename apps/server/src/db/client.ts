import { closeSync, openSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { drizzle, type BetterSQLite3Database } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import { installRoot } from "../lib/install-root.js";
import { ensurePrivateDir, makePrivate, PRIVATE_FILE_MODE } from "../lib/private-files.js";
import { damagedRegistry, RegistryError, registryFailure } from "./registry-error.js";
import * as schema from "./schema.js";

export type Db = BetterSQLite3Database<typeof schema> & { $client: Database.Database };

const migrationsFolder = path.join(installRoot, "drizzle");

/** Problems the integrity check lists at most; one is enough to refuse the file. */
const MAX_PROBLEMS = 20;

export interface DbHandle {
  db: Db;
  close(): void;
}

/** Runs `fn` in one transaction (a savepoint when nested): all of its writes are stored, or none. */
export type Transact = <T>(fn: () => T) => T;

/** Repos share the one connection, so their writes inside `fn` belong to the transaction. */
export const transactor =
  (db: Db): Transact =>
  (fn) =>
    db.transaction(() => fn());

/**
 * Opens the registry in an owner-only data dir, refuses a damaged one and migrates it. Every
 * failure its owner can act on is a RegistryError. On a full disk (SQLite cannot even size its
 * shared-memory file), `makeRoom` may free some and it is opened once more.
 */
export function openDb(file: string, makeRoom: () => boolean = () => false): DbHandle {
  try {
    return openOnce(file);
  } catch (err) {
    if (!(err instanceof RegistryError && err.diskFull) || !makeRoom()) throw err;
    return openOnce(file);
  }
}

function openOnce(file: string): DbHandle {
  let sqlite: Database.Database | undefined;
  try {
    makeRegistryPrivate(file);
    sqlite = new Database(file);
    sqlite.pragma("journal_mode = WAL");
    sqlite.pragma("synchronous = NORMAL");
    sqlite.pragma("foreign_keys = ON");
    sqlite.pragma("busy_timeout = 5000");
    checkIntegrity(sqlite, file);
    const db = drizzle(sqlite, { schema });
    migrate(db, { migrationsFolder });
    const opened = sqlite;
    return { db, close: () => opened.close() };
  } catch (err) {
    sqlite?.close();
    throw registryFailure(file, err);
  }
}

/**
 * quick_check first: it lists broken pages where integrity_check can stop at the first one with a
 * bare SQLITE_CORRUPT. integrity_check then also compares every index with its table. On 10,000
 * jobs (16 MiB) they take about 15 ms and 40 ms.
 *
 * Table by table, the stored ones only: a whole-file check also runs each virtual table's own
 * check, and the jobs text index's (FTS5) reads its whole index, 3 s of start-up at 100,000 jobs.
 * Its shadow tables are stored tables, so their pages are still checked.
 */
function checkIntegrity(sqlite: Database.Database, file: string): void {
  const tables = sqlite
    .prepare("select name from sqlite_schema where type = 'table' and sql not like 'create virtual table%'")
    .pluck()
    .all() as string[];
  for (const check of ["quick_check", "integrity_check"]) {
    for (const table of ["sqlite_schema", ...tables]) {
      const rows = sqlite.pragma(`${check}("${table.replaceAll('"', '""')}")`) as Record<string, string>[];
      const problems = rows.map((r) => r[check] ?? "").slice(0, MAX_PROBLEMS);
      if (problems.join() !== "ok") throw damagedRegistry(file, problems);
    }
  }
}

/**
 * SQLite creates the database 0644 and gives its -wal and -shm files the database's mode, so the
 * file is made 0600 before SQLite sees it; files from older versions are narrowed.
 */
function makeRegistryPrivate(file: string): void {
  ensurePrivateDir(path.dirname(file));
  closeSync(openSync(file, "a", PRIVATE_FILE_MODE));
  for (const f of [file, `${file}-wal`, `${file}-shm`]) makePrivate(f);
}
