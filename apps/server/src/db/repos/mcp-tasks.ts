import { and, desc, eq, inArray, isNull, lt, lte, or, sql } from "drizzle-orm";
import type { Dialect } from "../dialect.js";
import type { McpTasksRepo } from "../registry.js";

export function createMcpTasksRepo(d: Dialect): McpTasksRepo {
  const { jobs, mcpTasks } = d.tables;
  return {
    async insert(row) {
      await d.db.insert(mcpTasks).values(row);
    },
    async get(id) {
      const [row] = await d.db.select().from(mcpTasks).where(eq(mcpTasks.id, id));
      return row;
    },
    async moveToSession(id, sessionId) {
      await d.db.update(mcpTasks).set({ sessionId }).where(eq(mcpTasks.id, id));
    },
    async cancel(id, at) {
      await d.db
        .update(mcpTasks)
        .set({ cancelledAt: at })
        .where(and(eq(mcpTasks.id, id), isNull(mcpTasks.cancelledAt)));
    },
    async page(sessionId, after, limit) {
      const id = d.bytewise(mcpTasks.id);
      const start = after ? or(lt(mcpTasks.createdAt, after.createdAt), and(eq(mcpTasks.createdAt, after.createdAt), lt(id, after.id))) : undefined;
      return d.db
        .select()
        .from(mcpTasks)
        .where(and(eq(mcpTasks.sessionId, sessionId), start))
        .orderBy(desc(mcpTasks.createdAt), desc(id))
        .limit(limit);
    },
    async removeExpired(now) {
      const ended = d.db.select({ id: jobs.id }).from(jobs).where(sql`${jobs.status} not in ('queued', 'running')`);
      return d.changes(
        await d.db.delete(mcpTasks).where(and(lte(sql`${mcpTasks.createdAt} + ${mcpTasks.ttlMs}`, now), inArray(mcpTasks.jobId, ended))),
      );
    },
  };
}
