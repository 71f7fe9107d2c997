import { and, desc, eq, gt, lte } from "drizzle-orm";
import type { Db } from "../client.js";
import { browserSessions, type BrowserSessionRow } from "../schema.js";

export function createSessionsRepo(db: Db) {
  return {
    insert(row: BrowserSessionRow): void {
      db.insert(browserSessions).values(row).run();
    },
    /** The live session with this secret hash, if any. */
    findLive(secretHash: string, now: number): BrowserSessionRow | undefined {
      return db
        .select()
        .from(browserSessions)
        .where(and(eq(browserSessions.secretHash, secretHash), gt(browserSessions.expiresAt, now)))
        .get();
    },
    touch(id: string, lastSeenAt: number, expiresAt: number): void {
      db.update(browserSessions).set({ lastSeenAt, expiresAt }).where(eq(browserSessions.id, id)).run();
    },
    listLive(now: number): BrowserSessionRow[] {
      return db.select().from(browserSessions).where(gt(browserSessions.expiresAt, now)).orderBy(desc(browserSessions.lastSeenAt)).all();
    },
    remove(id: string): boolean {
      return db.delete(browserSessions).where(eq(browserSessions.id, id)).run().changes > 0;
    },
    removeAll(): number {
      return db.delete(browserSessions).run().changes;
    },
    removeExpired(now: number): number {
      return db.delete(browserSessions).where(lte(browserSessions.expiresAt, now)).run().changes;
    },
  };
}

export type SessionsRepo = ReturnType<typeof createSessionsRepo>;
