import { asc, eq, is } from "drizzle-orm";
import { PgTransaction } from "drizzle-orm/pg-core";
import type { Async } from "../../async.js";
import type { createAgentsRepo, NewAgentRow } from "../../repos/agents.js";
import type { AgentRow } from "../../schema.js";
import type { PgExecutor } from "../client.js";
import { agents } from "../schema.js";
import { bytewise, stored } from "./sql.js";

/**
 * Agent rows by name (null: no such agent) as last read outside a transaction, shared by the
 * pool's repository and the ones built on its transactions. A job looks its agent up about five
 * times and agents change rarely, so every write forgets them all.
 *
 * A transaction's writes become visible to the pool's reads only when it commits, which a
 * repository cannot see: whoever opens the transaction calls forget() once it has ended, dropping
 * any row the pool read in between (still the old one). Another process's writes are not seen:
 * a row stays as this process last read it until it writes an agent itself (or opens a
 * transaction), so only the process that writes agents, the server, may keep them; a runner reads
 * every time (createPgRegistry's `cacheAgents`).
 */
export class AgentRowCache {
  readonly rows = new Map<string, AgentRow | null>();
  /** Bumped by every forget(): a read that began before one does not keep what it read. */
  generation = 0;
  forget(): void {
    this.rows.clear();
    this.generation++;
  }
}

/** On a transaction, give it the pool repository's cache: its writes must reach the rows kept there. Null: read every time. */
export function createPgAgentsRepo(db: PgExecutor, cache: AgentRowCache | null = new AgentRowCache()): Async<ReturnType<typeof createAgentsRepo>> {
  // Inside a transaction, reads see its own uncommitted writes (never kept: it may roll back), so
  // they always go to the database.
  const inTransaction = is(db, PgTransaction);
  const changed = async <T>(write: PromiseLike<T>): Promise<T> => {
    cache?.forget();
    try {
      return await write;
    } finally {
      cache?.forget();
    }
  };
  return {
    async list() {
      return db
        .select()
        .from(agents)
        .orderBy(asc(bytewise(agents.name)));
    },
    async get(name) {
      const kept = inTransaction ? null : cache;
      if (!kept) {
        const [row] = await db.select().from(agents).where(eq(agents.name, name));
        return row;
      }
      const known = kept.rows.get(name);
      if (known !== undefined) return known ?? undefined;
      const generation = kept.generation;
      const [row] = await db.select().from(agents).where(eq(agents.name, name));
      if (generation === kept.generation) kept.rows.set(name, row ?? null);
      return row;
    },
    async insert(row: NewAgentRow) {
      return stored(await changed(db.insert(agents).values(row).returning()));
    },
    async insertMissing(rows) {
      if (rows.length) await changed(db.insert(agents).values(rows).onConflictDoNothing());
    },
    async update(name, patch) {
      const [row] = await changed(db.update(agents).set(patch).where(eq(agents.name, name)).returning());
      return row;
    },
    async delete(name) {
      const result = await changed(db.delete(agents).where(eq(agents.name, name)));
      return (result.rowCount ?? 0) > 0;
    },
  };
}
