import { and, desc, eq, gt, lte } from "drizzle-orm";
import type { Async } from "../../async.js";
import type { createSessionsRepo } from "../../repos/sessions.js";
import type { PgExecutor } from "../client.js";
import { browserSessions } from "../schema.js";

export function createPgSessionsRepo(db: PgExecutor): Async<ReturnType<typeof createSessionsRepo>> {
  return {
    async insert(row) {
      await db.insert(browserSessions).values(row);
    },
    async findLive(secretHash, now) {
      const [row] = await db
        .select()
        .from(browserSessions)
        .where(and(eq(browserSessions.secretHash, secretHash), gt(browserSessions.expiresAt, now)));
      return row;
    },
    async touch(id, lastSeenAt, expiresAt) {
      await db.update(browserSessions).set({ lastSeenAt, expiresAt }).where(eq(browserSessions.id, id));
    },
    async listLive(now) {
      return db.select().from(browserSessions).where(gt(browserSessions.expiresAt, now)).orderBy(desc(browserSessions.lastSeenAt));
    },
    async remove(id) {
      return ((await db.delete(browserSessions).where(eq(browserSessions.id, id))).rowCount ?? 0) > 0;
    },
    async removeAll() {
      return (await db.delete(browserSessions)).rowCount ?? 0;
    },
    async removeExpired(now) {
      return (await db.delete(browserSessions).where(lte(browserSessions.expiresAt, now))).rowCount ?? 0;
    },
  };
}
