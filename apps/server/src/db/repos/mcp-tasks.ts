import { and, desc, eq, inArray, isNull, lt, lte, or, sql } from "drizzle-orm";
import type { Db } from "../client.js";
import { jobs, mcpTasks, type McpTaskRow } from "../schema.js";

/** Where a page of a session's tasks starts: after this task, newest first. */
export interface TaskPageStart {
  createdAt: number;
  id: string;
}

export function createMcpTasksRepo(db: Db) {
  return {
    insert(row: McpTaskRow): void {
      db.insert(mcpTasks).values(row).run();
    },
    get(id: string): McpTaskRow | undefined {
      return db.select().from(mcpTasks).where(eq(mcpTasks.id, id)).get();
    },
    /** The task is listed by this session from now on. */
    moveToSession(id: string, sessionId: string): void {
      db.update(mcpTasks).set({ sessionId }).where(eq(mcpTasks.id, id)).run();
    },
    /** Marks it cancelled unless it already is; the first cancel is the one kept. */
    cancel(id: string, at: number): void {
      db.update(mcpTasks)
        .set({ cancelledAt: at })
        .where(and(eq(mcpTasks.id, id), isNull(mcpTasks.cancelledAt)))
        .run();
    },
    /** A session's tasks, newest first, `limit` of them after `after`. */
    page(sessionId: string, after: TaskPageStart | null, limit: number): McpTaskRow[] {
      const start = after
        ? or(lt(mcpTasks.createdAt, after.createdAt), and(eq(mcpTasks.createdAt, after.createdAt), lt(mcpTasks.id, after.id)))
        : undefined;
      return db
        .select()
        .from(mcpTasks)
        .where(and(eq(mcpTasks.sessionId, sessionId), start))
        .orderBy(desc(mcpTasks.createdAt), desc(mcpTasks.id))
        .limit(limit)
        .all();
    },
    /** Deletes the tasks past their time to live whose job has ended; a job still going keeps its task. */
    removeExpired(now: number): number {
      const ended = db.select({ id: jobs.id }).from(jobs).where(sql`${jobs.status} not in ('queued', 'running')`);
      return db
        .delete(mcpTasks)
        .where(and(lte(sql`${mcpTasks.createdAt} + ${mcpTasks.ttlMs}`, now), inArray(mcpTasks.jobId, ended)))
        .run().changes;
    },
  };
}

export type McpTasksRepo = ReturnType<typeof createMcpTasksRepo>;
