import { count } from "drizzle-orm";
import type { JobStatus } from "@corral/shared";
import type { Db } from "../client.js";
import { jobs } from "../schema.js";

/** Aggregates over the jobs table for /metrics. */
export function createJobStatsRepo(db: Db) {
  return {
    countByStatus(): Partial<Record<JobStatus, number>> {
      const rows = db.select({ status: jobs.status, n: count() }).from(jobs).groupBy(jobs.status).all();
      return Object.fromEntries(rows.map((r) => [r.status, r.n]));
    },
  };
}

export type JobStatsRepo = ReturnType<typeof createJobStatsRepo>;
