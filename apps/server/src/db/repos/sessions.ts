import { and, desc, eq, gt, lte } from "drizzle-orm";
import type { Dialect } from "../dialect.js";
import type { SessionsRepo } from "../registry.js";

export function createSessionsRepo(d: Dialect): SessionsRepo {
  const { browserSessions } = d.tables;
  return {
    async insert(row) {
      await d.db.insert(browserSessions).values(row);
    },
    async findLive(secretHash, now) {
      const [row] = await d.db
        .select()
        .from(browserSessions)
        .where(and(eq(browserSessions.secretHash, secretHash), gt(browserSessions.expiresAt, now)))
        .limit(1);
      return row;
    },
    async touch(id, lastSeenAt, expiresAt) {
      await d.db.update(browserSessions).set({ lastSeenAt, expiresAt }).where(eq(browserSessions.id, id));
    },
    async listLive(now) {
      return d.db.select().from(browserSessions).where(gt(browserSessions.expiresAt, now)).orderBy(desc(browserSessions.lastSeenAt));
    },
    async remove(id) {
      return d.changes(await d.db.delete(browserSessions).where(eq(browserSessions.id, id))) > 0;
    },
    async removeAll() {
      return d.changes(await d.db.delete(browserSessions));
    },
    async removeExpired(now) {
      return d.changes(await d.db.delete(browserSessions).where(lte(browserSessions.expiresAt, now)));
    },
  };
}
