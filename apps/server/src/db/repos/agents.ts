import { asc, eq, sql } from "drizzle-orm";
import type { Db } from "../client.js";
import { agents, type AgentRow } from "../schema.js";

export type NewAgentRow = typeof agents.$inferInsert;

export function createAgentsRepo(db: Db) {
  // Prepared once: the scheduler and every job start look agents up.
  const byName = db
    .select()
    .from(agents)
    .where(eq(agents.name, sql.placeholder("name")))
    .prepare();
  return {
    list(): AgentRow[] {
      return db.select().from(agents).orderBy(asc(agents.name)).all();
    },
    get(name: string): AgentRow | undefined {
      return byName.get({ name });
    },
    insert(row: NewAgentRow): AgentRow {
      return db.insert(agents).values(row).returning().get();
    },
    /** Adds the rows that are not there yet; keeps what users changed. */
    insertMissing(rows: NewAgentRow[]): void {
      if (rows.length) db.insert(agents).values(rows).onConflictDoNothing().run();
    },
    update(name: string, patch: Partial<NewAgentRow>): AgentRow | undefined {
      return db.update(agents).set(patch).where(eq(agents.name, name)).returning().get();
    },
    delete(name: string): boolean {
      return db.delete(agents).where(eq(agents.name, name)).run().changes > 0;
    },
  };
}

export type AgentsRepo = ReturnType<typeof createAgentsRepo>;
