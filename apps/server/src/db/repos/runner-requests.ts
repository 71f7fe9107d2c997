import { and, asc, eq, isNull, lt } from "drizzle-orm";
import type { Db } from "../client.js";
import { runnerRequests, type RunnerRequestRow } from "../schema.js";

/** What a runner stores to answer a request: the answer or the error, as JSON. */
export interface RunnerAnswer {
  answeredAt: number;
  answer: string | null;
  error: string | null;
}

/**
 * Browsing requests for workdirs on runners' machines (see the runner_requests table). With
 * PostgreSQL, asking and answering NOTIFY the other side; SQLite has no runners to tell.
 */
export function createRunnerRequestsRepo(db: Db) {
  return {
    /** Stores a request for its runner (PostgreSQL: and NOTIFYs its id on corral_request). */
    ask(row: Omit<RunnerRequestRow, "answeredAt" | "answer" | "error">): void {
      db.insert(runnerRequests).values(row).run();
    },
    get(id: string): RunnerRequestRow | undefined {
      return db.select().from(runnerRequests).where(eq(runnerRequests.id, id)).get();
    },
    /** The requests for runner `runner` not answered yet, oldest first. */
    pending(runner: string): RunnerRequestRow[] {
      return db
        .select()
        .from(runnerRequests)
        .where(and(eq(runnerRequests.runner, runner), isNull(runnerRequests.answeredAt)))
        .orderBy(asc(runnerRequests.askedAt), asc(runnerRequests.id))
        .all();
    },
    /**
     * Stores the answer of request `id` if it is still there and unanswered (PostgreSQL: and
     * NOTIFYs its id on corral_answer); false when it was answered already or given up on.
     */
    answer(id: string, answer: RunnerAnswer): boolean {
      return (
        db
          .update(runnerRequests)
          .set(answer)
          .where(and(eq(runnerRequests.id, id), isNull(runnerRequests.answeredAt)))
          .run().changes > 0
      );
    },
    /** Forgets a request whose answer was read (or that was given up on). */
    remove(id: string): void {
      db.delete(runnerRequests).where(eq(runnerRequests.id, id)).run();
    },
    /** Forgets every request asked before `before` (answered or not): nobody waits for them any more. */
    sweep(before: number): number {
      return db.delete(runnerRequests).where(lt(runnerRequests.askedAt, before)).run().changes;
    },
  };
}
