import { and, desc, eq, inArray, isNull, lt, lte, or, sql } from "drizzle-orm";
import type { Async } from "../../async.js";
import type { createMcpTasksRepo } from "../../repos/mcp-tasks.js";
import type { PgExecutor } from "../client.js";
import { jobs, mcpTasks } from "../schema.js";
import { bytewise } from "./sql.js";

export function createPgMcpTasksRepo(db: PgExecutor): Async<ReturnType<typeof createMcpTasksRepo>> {
  return {
    async insert(row) {
      await db.insert(mcpTasks).values(row);
    },
    async get(id) {
      const [row] = await db.select().from(mcpTasks).where(eq(mcpTasks.id, id));
      return row;
    },
    /** The task is listed by this session from now on. */
    async moveToSession(id, sessionId) {
      await db.update(mcpTasks).set({ sessionId }).where(eq(mcpTasks.id, id));
    },
    /** Marks it cancelled unless it already is; the first cancel is the one kept. */
    async cancel(id, at) {
      await db
        .update(mcpTasks)
        .set({ cancelledAt: at })
        .where(and(eq(mcpTasks.id, id), isNull(mcpTasks.cancelledAt)));
    },
    /** A session's tasks, newest first, `limit` of them after `after`. */
    async page(sessionId, after, limit) {
      const id = bytewise(mcpTasks.id);
      const start = after ? or(lt(mcpTasks.createdAt, after.createdAt), and(eq(mcpTasks.createdAt, after.createdAt), lt(id, after.id))) : undefined;
      return db
        .select()
        .from(mcpTasks)
        .where(and(eq(mcpTasks.sessionId, sessionId), start))
        .orderBy(desc(mcpTasks.createdAt), desc(id))
        .limit(limit);
    },
    /** Deletes the tasks past their time to live whose job has ended; a job still going keeps its task. */
    async removeExpired(now) {
      const ended = db.select({ id: jobs.id }).from(jobs).where(sql`${jobs.status} not in ('queued', 'running')`);
      const result = await db.delete(mcpTasks).where(and(lte(sql`${mcpTasks.createdAt} + ${mcpTasks.ttlMs}`, now), inArray(mcpTasks.jobId, ended)));
      return result.rowCount ?? 0;
    },
  };
}
