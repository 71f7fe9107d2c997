#!/usr/bin/env node
// `pnpm registry:copy` (dist/registry-copy.js): moves a Corral from its SQLite registry to
// PostgreSQL once, before the server is first started with CORRAL_DATABASE_URL.
import { existsSync } from "node:fs";
import path from "node:path";
import { ConfigError, loadConfig } from "../config.js";
import { openDb } from "./client.js";
import { copyPrinter, rowCount } from "./copy-progress.js";
import { CopyRefusedError, copyToPostgres, TableCopyError } from "./copy-to-postgres.js";
import { openPgDb } from "./pg/client.js";
import { describePgUrl } from "./pg/url.js";
import { RegistryError } from "./registry-error.js";
import { sqliteInUse } from "./sqlite-in-use.js";

/** The shell commands that drop and recreate the database the URL names, as its owner (the URL's user) would have it. */
function emptyDatabaseCommands(url: string): string {
  const u = new URL(url);
  const name = decodeURIComponent(u.pathname.slice(1)) || "<database>";
  const owner = decodeURIComponent(u.username) || "<user>";
  return `dropdb ${name} && createdb --owner ${owner} ${name}`;
}

async function main(): Promise<void> {
  // The server's own reading of the settings: the same data dir, the same check of the URL.
  const config = loadConfig();
  if (!config.databaseUrl) {
    throw new CopyRefusedError(
      "CORRAL_DATABASE_URL is not set: set it to the PostgreSQL registry to copy into (postgres://user:password@host:5432/database), an empty database no Corral server has started on yet.",
    );
  }
  const file = path.join(config.dataDir, "corral.db");
  if (!existsSync(file)) {
    throw new CopyRefusedError(
      `There is no SQLite registry to copy: ${file} does not exist. Set CORRAL_DATA_DIR to the data dir the server used (default ~/.local/share/corral).`,
    );
  }
  if (sqliteInUse(file)) {
    throw new CopyRefusedError(
      `${file} is open in another process (a Corral server using ${config.dataDir}?): stop it, then run pnpm registry:copy again. Nothing was copied.`,
    );
  }
  const where = describePgUrl(config.databaseUrl);
  // Opened as the server opens it: checked, and brought up to this checkout's tables.
  const source = openDb(file);
  try {
    const target = await openPgDb(config.databaseUrl, { max: 1 });
    try {
      process.stdout.write(`Copying the registry ${file} into ${where}\n`);
      const started = performance.now();
      const printer = copyPrinter({ write: (text) => process.stdout.write(text), tty: process.stdout.isTTY === true });
      const copied = await copyToPostgres(source.db, target.db, {
        onTable: printer.table,
        onProgress: printer.progress,
        emptyDatabase: emptyDatabaseCommands(config.databaseUrl),
      }).finally(printer.done);
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      const total = copied.reduce((sum, t) => sum + t.rows, 0);
      process.stdout.write(
        `Copied ${rowCount(total)} in ${copied.length} tables in ${seconds} s.\n` +
          `Start Corral with the same CORRAL_DATA_DIR (job output and files stay there) and CORRAL_DATABASE_URL. ${file} is left as it was.\n`,
      );
    } finally {
      await target.close();
    }
  } finally {
    source.close();
  }
}

main().catch((err: unknown) => {
  const known = err instanceof ConfigError || err instanceof RegistryError || err instanceof CopyRefusedError || err instanceof TableCopyError;
  process.stderr.write(
    `${known ? (err as Error).message : `pnpm registry:copy failed, nothing was copied: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`}\n`,
  );
  process.exit(1);
});
