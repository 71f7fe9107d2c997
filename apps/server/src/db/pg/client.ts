import path from "node:path";
import { drizzle, type NodePgDatabase } from "drizzle-orm/node-postgres";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { migrate } from "drizzle-orm/node-postgres/migrator";
import pg from "pg";
import { DEFAULT_LOCK_TIMEOUT_MS } from "../../config.js";
import { installRoot } from "../../lib/install-root.js";
import { RegistryError } from "../registry-error.js";
import { describePgUrl } from "./url.js";
import * as schema from "./schema.js";

export type PgDb = NodePgDatabase<typeof schema> & { $client: pg.Pool };
/** What a repository runs its statements on: the pool, or a transaction (a savepoint when nested) that the registry opened. */
export type PgExecutor = PgDb | Parameters<Parameters<PgDb["transaction"]>[0]>[0];

export interface PgHandle {
  db: PgDb;
  /** Its connections' lock_timeout. */
  lockTimeoutMs: number;
  close(): Promise<void>;
}

const migrationsFolder = path.join(installRoot, "drizzle-pg");

/** Every Corral process migrating one database takes this advisory lock first: one migrates, the others then find nothing to do. */
const MIGRATION_LOCK = 7_433_017;

/** int8 (counts, ids, and the bigint columns) as numbers: every such value here is far below 2^53. */
const INT8_OID = 20;
const types = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

export interface PgOptions {
  /** Connections in the pool; PostgreSQL's default limit is 100 for every client together. */
  max?: number;
  /** Told about a connection the pool lost while idle (the server restarted, the network dropped). */
  onError?: (err: Error) => void;
  /**
   * `migrate` (the server): bring the tables up to this checkout's. `check` (a runner, whose login
   * may not create anything): refuse a registry whose tables are not exactly this checkout's.
   */
  schema?: "migrate" | "check";
  /** How long a statement waits for a lock before it fails with 55P03 (lock-wait.ts): no other login's lock holds Corral forever. */
  lockTimeoutMs?: number;
}

/**
 * Connects to the registry in PostgreSQL (CORRAL_DATABASE_URL) and migrates it. A failure its
 * owner can act on (unreachable, refused login, missing database) is a RegistryError that names
 * the server but never the password.
 */
export async function openPgDb(url: string, options: PgOptions = {}): Promise<PgHandle> {
  const lockTimeoutMs = options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    types,
    application_name: "corral",
    options: `-c lock_timeout=${Math.floor(lockTimeoutMs)}`,
  });
  // An idle connection's error is emitted on the pool; unheard, it would end the process. One
  // checked out (a transaction between statements when the server goes away) emits it on itself,
  // where the pool does not listen: each connection gets a listener of its own. Its statement fails anyway.
  pool.on("error", (err) => options.onError?.(err));
  pool.on("connect", (client) => client.on("error", () => undefined));
  try {
    if (options.schema === "check") await checkMigrated(pool, url);
    else await migrateLocked(pool);
  } catch (err) {
    await pool.end().catch(() => {});
    throw pgFailure(url, err);
  }
  const db = drizzle(pool, { schema }) as PgDb;
  return { db, lockTimeoutMs, close: () => pool.end() };
}

async function migrateLocked(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    // Another server may be migrating for longer than lock_timeout: this one waits for it.
    await client.query("set lock_timeout = 0");
    await client.query("select pg_advisory_lock($1)", [MIGRATION_LOCK]);
    try {
      await migrate(drizzle(client, { schema }), { migrationsFolder });
    } finally {
      await client.query("select pg_advisory_unlock($1)", [MIGRATION_LOCK]);
      await client.query("reset lock_timeout");
    }
  } finally {
    client.release();
  }
}

/** The registry's tables are this checkout's: the last migration applied there is this checkout's last. */
async function checkMigrated(pool: pg.Pool, url: string): Promise<void> {
  const ours = readMigrationFiles({ migrationsFolder }).at(-1)?.folderMillis ?? 0;
  const where = describePgUrl(url);
  let theirs: number;
  try {
    const { rows } = await pool.query<{ last: number | null }>("select max(created_at) as last from drizzle.__drizzle_migrations");
    theirs = Number(rows[0]?.last ?? 0);
  } catch (err) {
    // No table there (42P01, or its schema: 3F000): no Corral server has used this database yet.
    if (!["42P01", "3F000"].includes(String((err as { code?: unknown }).code))) throw err;
    theirs = 0;
  }
  if (theirs === ours) return;
  if (theirs < ours) {
    throw new RegistryError(
      `The registry at ${where} has ${theirs ? "older" : "no"} Corral tables: start the Corral server of this version on it first (it creates and upgrades them), then this runner.`,
    );
  }
  throw new RegistryError(
    `The registry at ${where} has newer Corral tables than this checkout knows: update it (git pull && node scripts/setup.mjs) to the server's version.`,
  );
}

function pgFailure(url: string, err: unknown): unknown {
  const code = String((err as { code?: unknown }).code ?? "");
  const detail = err instanceof Error ? err.message : String(err);
  const where = describePgUrl(url);
  if (["ECONNREFUSED", "ENOTFOUND", "EHOSTUNREACH", "ETIMEDOUT", "EAI_AGAIN"].includes(code)) {
    return new RegistryError(`Corral could not reach PostgreSQL at ${where} (${code}). Start it, or correct CORRAL_DATABASE_URL.`);
  }
  if (code === "28P01" || code === "28000") {
    return new RegistryError(`PostgreSQL at ${where} refused the login (${detail}). Check the user and password in CORRAL_DATABASE_URL.`);
  }
  if (code === "3D000") {
    return new RegistryError(`PostgreSQL at ${where} has no such database (${detail}). Create it (createdb), or correct CORRAL_DATABASE_URL.`);
  }
  if (code === "42501") {
    return new RegistryError(
      `The PostgreSQL user in CORRAL_DATABASE_URL may not create Corral's tables at ${where} (${detail}). Grant it CREATE on the database, or run Corral once as its owner.`,
    );
  }
  return err;
}
