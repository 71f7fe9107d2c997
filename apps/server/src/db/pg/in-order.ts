import { sql } from "drizzle-orm";
import type { PgExecutor } from "./client.js";

/** Advisory lock keys: one per identity whose numbers readers take as commit order. */
export const ORDERED = { jobs: 7_433_101, hubMessages: 7_433_102 } as const;

/** Advisory lock key every registry transaction holds until it ends (see createPgRegistry). */
export const TRANSACTIONS = 7_433_100;

/**
 * Runs an insert that draws the next number of an identity sequence so that numbers commit in
 * the order they were drawn. PostgreSQL hands out sequence values at once but transactions
 * commit when they end: a later, higher number could commit first, and a reader that saw it and
 * then asks "after it" would skip the lower one committed a moment later. A transaction-scoped
 * advisory lock taken before the number is drawn, held until the transaction (the registry's own,
 * when the insert is part of one) ends, makes the next insert wait for this one's commit.
 */
export function inOrder<T>(db: PgExecutor, key: number, insert: (tx: PgExecutor) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${key})`);
    return insert(tx);
  });
}

/**
 * Advisory lock class a claim takes for an agent (with the hash of its name) while it counts the
 * agent's jobs and takes one: claims for the same agent from several runners then count one after
 * another, so together they never pass its maxConcurrent.
 */
export const AGENT_CLAIMS = 7_433_103;
