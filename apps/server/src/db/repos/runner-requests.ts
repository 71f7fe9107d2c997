import { and, asc, eq, isNull, lt } from "drizzle-orm";
import type { Dialect } from "../dialect.js";
import type { RunnerRequestsRepo } from "../registry.js";

/** Browsing requests for workdirs on runners' machines; asking and answering tell the other side. */
export function createRunnerRequestsRepo(d: Dialect): RunnerRequestsRepo {
  const { runnerRequests } = d.tables;
  return {
    async ask(row) {
      await d.db.insert(runnerRequests).values(row);
      // Ids only: the runner reads the request from the table.
      await d.notify("request", row.id);
    },
    async get(id) {
      const [row] = await d.db.select().from(runnerRequests).where(eq(runnerRequests.id, id));
      return row;
    },
    async pending(runner) {
      return d.db
        .select()
        .from(runnerRequests)
        .where(and(eq(runnerRequests.runner, runner), isNull(runnerRequests.answeredAt)))
        .orderBy(asc(runnerRequests.askedAt), asc(d.bytewise(runnerRequests.id)));
    },
    async answer(id, answer) {
      // JSON text: a NUL in a file name is escaped, so PostgreSQL's text takes it.
      const result = await d.db
        .update(runnerRequests)
        .set(answer)
        .where(and(eq(runnerRequests.id, id), isNull(runnerRequests.answeredAt)));
      const stored = d.changes(result) > 0;
      if (stored) await d.notify("answer", id);
      return stored;
    },
    async remove(id) {
      await d.db.delete(runnerRequests).where(eq(runnerRequests.id, id));
    },
    async sweep(before) {
      return d.changes(await d.db.delete(runnerRequests).where(lt(runnerRequests.askedAt, before)));
    },
  };
}
