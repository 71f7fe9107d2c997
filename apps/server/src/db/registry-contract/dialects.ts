// The registry in each dialect, fresh and migrated, for the contract tests: the same cases run
// against both (`describe.each(DIALECTS)`), through the Registry the server itself opens.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { usePostgres } from "../../../test/postgres.js";
import { pgRegistryAt, sqliteRegistryAt, type TestRegistry } from "../../../test/test-registry.js";

export type { TestRegistry };

export async function sqliteRepos(): Promise<TestRegistry> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "corral-contract-"));
  const registry = sqliteRegistryAt(path.join(dir, "corral.db"));
  return {
    ...registry,
    async close() {
      await registry.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const postgres = usePostgres();

export async function pgRepos(): Promise<TestRegistry> {
  // A user's database collates text by its locale, where SQLite compares bytes: the repositories must not care.
  return pgRegistryAt(await postgres.database({ icuLocale: "en-US" }));
}

/** Each dialect the registry can live in; PostgreSQL where it is installed (usePostgres says when it is not). */
export const DIALECTS = [{ dialect: "SQLite", open: sqliteRepos }, ...(postgres.available ? [{ dialect: "PostgreSQL", open: pgRepos }] : [])];
