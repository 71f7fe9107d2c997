import { count } from "drizzle-orm";
import type { Async } from "../../async.js";
import type { createJobStatsRepo } from "../../repos/job-stats.js";
import type { PgExecutor } from "../client.js";
import { jobs } from "../schema.js";

/** Aggregates over the jobs table for /metrics. */
export function createPgJobStatsRepo(db: PgExecutor): Async<ReturnType<typeof createJobStatsRepo>> {
  return {
    async countByStatus() {
      const rows = await db.select({ status: jobs.status, n: count() }).from(jobs).groupBy(jobs.status);
      return Object.fromEntries(rows.map((r) => [r.status, r.n]));
    },
  };
}
