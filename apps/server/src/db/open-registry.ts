import path from "node:path";
import type { AppConfig } from "../config.js";
import { SpaceReserve } from "../lib/disk-space.js";
import { openDb } from "./client.js";
import type { Registry } from "./registry.js";
import { createSqliteRegistry } from "./sqlite-registry.js";

/**
 * The registry the settings name: PostgreSQL at CORRAL_DATABASE_URL, else SQLite in the data dir.
 * PostgreSQL's client is loaded only when it is used, so a one-machine Corral starts without it.
 */
export async function openRegistry(config: AppConfig, onLostConnection: (err: Error) => void): Promise<Registry> {
  if (!config.databaseUrl) {
    const reserve = new SpaceReserve(config.dataDir);
    return createSqliteRegistry(openDb(path.join(config.dataDir, "corral.db"), () => reserve.release()));
  }
  const [{ openPgDb }, { createPgRegistry }] = await Promise.all([import("./pg/client.js"), import("./pg/registry.js")]);
  return createPgRegistry(await openPgDb(config.databaseUrl, { onError: onLostConnection, lockTimeoutMs: config.registryLockTimeoutMs }));
}
