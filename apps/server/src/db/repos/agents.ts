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
  /**
   * Rows by name (null: no such agent) as last read outside a transaction. A job looks its agent
   * up about five times (launch, the scheduler, start, end) and agents change rarely: every write
   * below forgets them all. A read inside a transaction is not kept, as it may be rolled back.
   */
  const known = new Map<string, AgentRow | null>();
  const changed = <T>(result: T): T => {
    known.clear();
    return result;
  };
  return {
    list(): AgentRow[] {
      return db.select().from(agents).orderBy(asc(agents.name)).all();
    },
    get(name: string): AgentRow | undefined {
      const kept = known.get(name);
      if (kept !== undefined) return kept ?? undefined;
      const row = byName.get({ name });
      if (!db.$client.inTransaction) known.set(name, row ?? null);
      return row;
    },
    insert(row: NewAgentRow): AgentRow {
      return changed(db.insert(agents).values(row).returning().get());
    },
    /** Adds the rows that are not there yet; keeps what users changed. */
    insertMissing(rows: NewAgentRow[]): void {
      if (rows.length) changed(db.insert(agents).values(rows).onConflictDoNothing().run());
    },
    update(name: string, patch: Partial<NewAgentRow>): AgentRow | undefined {
      return changed(db.update(agents).set(patch).where(eq(agents.name, name)).returning().get());
    },
    delete(name: string): boolean {
      return changed(db.delete(agents).where(eq(agents.name, name)).run().changes > 0);
    },
  };
}

export type AgentsRepo = ReturnType<typeof createAgentsRepo>;
