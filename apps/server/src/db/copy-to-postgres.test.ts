import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { getTableConfig, type PgTable } from "drizzle-orm/pg-core";
import { describe, expect, test } from "vitest";
import { usePostgres } from "../../test/postgres.js";
import { openDb } from "./client.js";
import { copiedTables, copyToPostgres, type TableCopied, type TableProgress } from "./copy-to-postgres.js";
import { openPgDb } from "./pg/client.js";
import * as pgSchema from "./pg/schema.js";

const isPgTable = (v: unknown): v is PgTable => {
  try {
    return getTableConfig(v as PgTable).name !== undefined;
  } catch {
    return false;
  }
};

test("pnpm registry:copy copies every table of the registry, parents before the tables that refer to them", () => {
  const tables = Object.values(pgSchema).filter(isPgTable);
  expect([...copiedTables()].sort()).toEqual(tables.map((t) => getTableConfig(t).name).sort());
  const order = copiedTables();
  for (const table of tables) {
    const { name, foreignKeys } = getTableConfig(table);
    for (const key of foreignKeys) {
      const parent = getTableConfig(key.reference().foreignTable).name;
      expect(order.indexOf(parent), `${parent} before ${name}`).toBeLessThan(order.indexOf(name));
    }
  }
});

const pg = usePostgres();

describe.skipIf(!pg.available)("the copy's progress", () => {
  test("tells each table's progress after every batch, increasing, ending at the table's row count", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "corral-copy-"));
    const source = openDb(path.join(dir, "corral.db"));
    const target = await openPgDb(await pg.database());
    try {
      const sqlite = source.db.$client;
      sqlite
        .prepare(
          "insert into agents (name, kind, provider, workdir, timeout_s, max_concurrent, env, enabled, builtin, created_at, updated_at) values ('here', 'command', 'here', '/tmp', 60, 1, '{}', 1, 0, 1, 1)",
        )
        .run();
      const job = sqlite.prepare(
        "insert into jobs (id, agent, status, prompt, workdir, timeout_s, origin, created_at) values (?, 'here', 'succeeded', 'p', '/tmp', 60, 'rest', 1)",
      );
      const JOBS = 4321;
      sqlite.transaction(() => {
        for (let i = 0; i < JOBS; i++) job.run(`j${i}`);
      })();

      // Both kinds of report in the order they came.
      const told: (TableProgress | TableCopied)[] = [];
      await copyToPostgres(source.db, target.db, { onProgress: (p) => told.push(p), onTable: (t) => told.push(t) });
      const progress = told.filter((t): t is TableProgress => "of" in t);
      const tables = told.filter((t): t is TableCopied => !("of" in t));

      const jobs = progress.filter((p) => p.table === "jobs");
      // Several batches (each under PostgreSQL's parameter limit), each told as it is stored.
      expect(jobs.length).toBeGreaterThan(1);
      expect(jobs.every((p) => p.of === JOBS)).toBe(true);
      expect(jobs.every((p, i) => i === 0 || p.rows > (jobs[i - 1]?.rows ?? 0))).toBe(true);
      expect(jobs.at(-1)?.rows).toBe(JOBS);
      // Every table's progress comes just before its count and ends at it; a table without rows tells none.
      for (const { table, rows } of tables) {
        const at = told.findIndex((t) => t.table === table && !("of" in t));
        const before = told.slice(0, at).filter((t) => t.table === table);
        expect(
          told.slice(at + 1).some((t) => t.table === table),
          table,
        ).toBe(false);
        expect(before.at(-1)?.rows, table).toBe(rows === 0 ? undefined : rows);
      }
      expect(tables.find((t) => t.table === "agents")?.rows).toBe(1);
      expect(tables.map((t) => t.table)).toEqual(copiedTables());
    } finally {
      await target.close();
      source.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
