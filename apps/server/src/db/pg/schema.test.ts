import { getTableConfig as pgTableConfig, type PgTable } from "drizzle-orm/pg-core";
import { getTableConfig as sqliteTableConfig, type SQLiteTable } from "drizzle-orm/sqlite-core";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { usePostgres } from "../../../test/postgres.js";
import { RegistryError } from "../registry-error.js";
import * as sqlite from "../schema.js";
import { openPgDb } from "./client.js";
import { describePgUrl } from "./url.js";
import * as pgSchema from "./schema.js";

const tables = <T>(module: Record<string, unknown>, is: (v: unknown) => v is T) => Object.values(module).filter(is);
const isSqliteTable = (v: unknown): v is SQLiteTable => {
  try {
    return sqliteTableConfig(v as SQLiteTable).name !== undefined;
  } catch {
    return false;
  }
};
const isPgTable = (v: unknown): v is PgTable => {
  try {
    return pgTableConfig(v as PgTable).name !== undefined;
  } catch {
    return false;
  }
};

/** Each table's columns as `name nullable`, and its primary key, by table name. */
function shape(
  configs: { name: string; columns: { name: string; notNull: boolean; primary: boolean }[]; primaryKeys: { columns: { name: string }[] }[] }[],
) {
  return Object.fromEntries(
    configs.map((t) => [
      t.name,
      {
        columns: t.columns.map((c) => `${c.name}${c.notNull || c.primary ? "" : "?"}`).sort(),
        key: [...t.columns.filter((c) => c.primary).map((c) => c.name), ...t.primaryKeys.flatMap((k) => k.columns.map((c) => c.name))].sort(),
      },
    ]),
  );
}

// Row types: what a PostgreSQL repository hands out must be what the SQLite one does (checked by tsc).
type Same<P, S> = [P] extends [S] ? true : false;
const rowsMatch: [
  Same<typeof pgSchema.agents.$inferSelect, sqlite.AgentRow>,
  Same<typeof pgSchema.jobs.$inferSelect, sqlite.JobRow>,
  Same<typeof pgSchema.ollamaModels.$inferSelect, sqlite.OllamaModelRow>,
  Same<typeof pgSchema.jobFileChanges.$inferSelect, sqlite.JobFileRow>,
  Same<typeof pgSchema.priceOverrides.$inferSelect, sqlite.PriceOverrideRow>,
  Same<typeof pgSchema.budgets.$inferSelect, sqlite.BudgetRow>,
  Same<typeof pgSchema.jobAttempts.$inferSelect, sqlite.JobAttemptRow>,
  Same<typeof pgSchema.auditLog.$inferSelect, sqlite.AuditRow>,
  Same<typeof pgSchema.browserSessions.$inferSelect, sqlite.BrowserSessionRow>,
  Same<typeof pgSchema.mcpTasks.$inferSelect, sqlite.McpTaskRow>,
  Same<typeof pgSchema.jobMessages.$inferSelect, sqlite.JobMessageRow>,
  Same<typeof pgSchema.hubAgents.$inferSelect, sqlite.HubAgentRow>,
  Same<typeof pgSchema.hubMessages.$inferSelect, sqlite.HubMessageRow>,
  Same<typeof pgSchema.runners.$inferSelect, sqlite.RunnerRow>,
  Same<typeof pgSchema.jobOutput.$inferSelect, sqlite.JobOutputRow>,
  Same<typeof pgSchema.runnerRequests.$inferSelect, sqlite.RunnerRequestRow>,
] = [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true];

describe("the PostgreSQL schema", () => {
  it("has the SQLite schema's tables, columns, nullability and keys", () => {
    expect(rowsMatch.every(Boolean)).toBe(true);
    const fromSqlite = shape(tables(sqlite, isSqliteTable).map(sqliteTableConfig));
    const fromPg = shape(tables(pgSchema, isPgTable).map(pgTableConfig));
    // seq is filled by a trigger in SQLite (nullable to drizzle) and by an identity in PostgreSQL.
    const jobs = fromSqlite.jobs;
    if (jobs) jobs.columns = jobs.columns.map((c) => (c === "seq?" ? "seq" : c));
    expect(fromPg).toEqual(fromSqlite);
  });

  it("never shows a password when it names a server", () => {
    expect(describePgUrl("postgres://corral:s3cret@db.example:5432/corral")).toBe("postgres://corral@db.example:5432/corral");
    expect(describePgUrl("not a url")).not.toContain("not a url");
  });
});

const pg = usePostgres();

describe.skipIf(!pg.available)("a registry in PostgreSQL", () => {
  it("migrates a new database, once even when several processes open it together", async () => {
    const url = await pg.database();
    const handles = await Promise.all([openPgDb(url), openPgDb(url), openPgDb(url)]);
    try {
      const { rows } = await handles[0]!.db.$client.query<{ tablename: string }>(
        "select tablename from pg_tables where schemaname = 'public' order by 1",
      );
      // runner_logins is the database's own (drizzle-pg/0007_runner_identity.sql): its policies read it, no repository does.
      expect(rows.map((r) => r.tablename)).toEqual([...tables(pgSchema, isPgTable).map((t) => pgTableConfig(t).name), "runner_logins"].sort());
      const migrations = await handles[0]!.db.$client.query("select * from drizzle.__drizzle_migrations");
      expect(migrations.rowCount).toBeGreaterThan(0);
    } finally {
      await Promise.all(handles.map((h) => h.close()));
    }
  });

  it("hands out rows as the SQLite registry does: numbers, booleans, JSON, jobs numbered in order", async () => {
    const { db, close } = await openPgDb(await pg.database());
    try {
      const now = Date.now();
      await db.insert(pgSchema.agents).values({
        name: "gemini",
        kind: "gemini",
        provider: "google",
        workdir: "/tmp",
        timeoutS: 600,
        maxConcurrent: 4,
        env: { A: "1" },
        enabled: true,
        builtin: true,
        createdAt: now,
        updatedAt: now,
      });
      for (const id of ["j1", "j2", "j3"]) {
        await db.insert(pgSchema.jobs).values({
          id,
          agent: "gemini",
          status: "queued",
          prompt: "p",
          workdir: "/tmp",
          timeoutS: 600,
          origin: "mcp",
          createdAt: now,
          outputBytes: 3 * 2 ** 32,
        });
      }
      const [agent] = await db.select().from(pgSchema.agents);
      expect(agent).toMatchObject({ env: { A: "1" }, enabled: true, createdAt: now, maxConcurrent: 4 });
      const rows = await db.select().from(pgSchema.jobs).orderBy(pgSchema.jobs.seq);
      expect(rows.map((r) => [r.id, r.seq])).toEqual([
        ["j1", 1],
        ["j2", 2],
        ["j3", 3],
      ]);
      expect(rows[0]?.outputBytes).toBe(3 * 2 ** 32);
      const [count] = (await db.$client.query<{ n: number }>("select count(*) as n from jobs")).rows;
      expect(count?.n).toBe(3);
      await db.update(pgSchema.agents).set({ name: "gemini2" }).where(eq(pgSchema.agents.name, "gemini"));
      expect((await db.select().from(pgSchema.jobs)).every((r) => r.agent === "gemini2")).toBe(true);
    } finally {
      await close();
    }
  });

  it("says what to do when the server cannot be reached, refuses the login, or has no such database", async () => {
    const url = new URL(await pg.database());
    const unreachable = new URL(url);
    unreachable.port = "1";
    await expect(openPgDb(unreachable.toString())).rejects.toThrow(/could not reach PostgreSQL at .*ECONNREFUSED.*CORRAL_DATABASE_URL/);
    const missing = new URL(url);
    missing.pathname = "/no_such_db";
    missing.password = "hunter2";
    const err = await openPgDb(missing.toString()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RegistryError);
    expect(String(err)).toMatch(/has no such database/);
    expect(String(err)).not.toContain("hunter2");
  });
});
