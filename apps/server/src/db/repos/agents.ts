import { asc, eq, sql } from "drizzle-orm";
import type { Dialect } from "../dialect.js";
import type { AgentsRepo } from "../registry.js";
import type { AgentRow } from "../schema.js";
import { stored } from "./rows.js";

/**
 * Agent rows by name (null: no such agent) as last read outside a transaction, shared by the
 * registry's repository and the ones built for its transactions. A job looks its agent up about
 * five times (launch, the scheduler, start, end) and agents change rarely, so every write forgets
 * them all.
 *
 * A transaction's writes become visible to reads outside it only when it commits, which a
 * repository cannot see: whoever opens the transaction calls forget() once it has ended, dropping
 * any row read outside in between (still the old one). Another process's writes are not seen: a
 * row stays as this process last read it until it writes an agent itself (or opens a transaction),
 * so only the process that writes agents, the server, may keep them; a runner reads every time
 * (createPgRegistry's `cacheAgents`).
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

/** On a transaction's dialect, give it the registry repository's cache: its writes must reach the rows kept there. Null: read every time. */
export function createAgentsRepo(d: Dialect, cache: AgentRowCache | null): AgentsRepo {
  const { agents } = d.tables;
  // Prepared once: the scheduler and every job start look agents up.
  const byName = d.prepare((db) =>
    db
      .select()
      .from(agents)
      .where(eq(agents.name, sql.placeholder("name"))),
  );
  // Inside a transaction, reads see its own uncommitted writes (never kept: it may roll back).
  const kept = d.inTransaction ? null : cache;
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
      return d.db
        .select()
        .from(agents)
        .orderBy(asc(d.bytewise(agents.name)));
    },
    async get(name) {
      if (!kept) return (await byName({ name }))[0];
      const known = kept.rows.get(name);
      if (known !== undefined) return known ?? undefined;
      const generation = kept.generation;
      const [row] = await byName({ name });
      if (generation === kept.generation) kept.rows.set(name, row ?? null);
      return row;
    },
    async insert(row) {
      return stored(await changed(d.db.insert(agents).values(row).returning()));
    },
    async insertMissing(rows) {
      if (rows.length) await changed(d.db.insert(agents).values(rows).onConflictDoNothing());
    },
    async update(name, patch) {
      const [row] = await changed(d.db.update(agents).set(patch).where(eq(agents.name, name)).returning());
      return row;
    },
    async delete(name) {
      return d.changes(await changed(d.db.delete(agents).where(eq(agents.name, name)))) > 0;
    },
  };
}
