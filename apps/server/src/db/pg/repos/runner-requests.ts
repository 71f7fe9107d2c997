import { and, asc, eq, isNull, lt, sql } from "drizzle-orm";
import type { Async } from "../../async.js";
import type { createRunnerRequestsRepo } from "../../repos/runner-requests.js";
import type { PgExecutor } from "../client.js";
import { ANSWER_CHANNEL, REQUEST_CHANNEL } from "../job-changes.js";
import { runnerRequests } from "../schema.js";

export function createPgRunnerRequestsRepo(db: PgExecutor): Async<ReturnType<typeof createRunnerRequestsRepo>> {
  return {
    async ask(row) {
      await db.insert(runnerRequests).values(row);
      // Ids only: the runner reads the request from the table.
      await db.execute(sql`select pg_notify(${REQUEST_CHANNEL}, ${row.id})`);
    },
    async get(id) {
      const [row] = await db.select().from(runnerRequests).where(eq(runnerRequests.id, id));
      return row;
    },
    async pending(runner) {
      return db
        .select()
        .from(runnerRequests)
        .where(and(eq(runnerRequests.runner, runner), isNull(runnerRequests.answeredAt)))
        .orderBy(asc(runnerRequests.askedAt), asc(runnerRequests.id));
    },
    async answer(id, answer) {
      const stored =
        ((
          await db
            .update(runnerRequests)
            // JSON text: a NUL in a file name is escaped, so PostgreSQL's text takes it.
            .set(answer)
            .where(and(eq(runnerRequests.id, id), isNull(runnerRequests.answeredAt)))
        ).rowCount ?? 0) > 0;
      if (stored) await db.execute(sql`select pg_notify(${ANSWER_CHANNEL}, ${id})`);
      return stored;
    },
    async remove(id) {
      await db.delete(runnerRequests).where(eq(runnerRequests.id, id));
    },
    async sweep(before) {
      return (await db.delete(runnerRequests).where(lt(runnerRequests.askedAt, before))).rowCount ?? 0;
    },
  };
}
