import { count } from "drizzle-orm";
import type { Dialect } from "../dialect.js";
import type { JobStatsRepo } from "../registry.js";

export function createJobStatsRepo(d: Dialect): JobStatsRepo {
  const { jobs } = d.tables;
  return {
    async countByStatus() {
      const rows = await d.db.select({ status: jobs.status, n: count() }).from(jobs).groupBy(jobs.status);
      return Object.fromEntries(rows.map((r) => [r.status, r.n]));
    },
  };
}
