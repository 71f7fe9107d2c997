import { sql } from "drizzle-orm";
import type { Dialect } from "../dialect.js";
import { OUTPUT_PAGE_BYTES, type JobOutputRepo } from "../registry.js";
import type { JobOutputRow } from "../schema.js";

/** Runners' job output on its way to the server (see the job_output table). */
export function createJobOutputRepo(d: Dialect): JobOutputRepo {
  const { jobOutput } = d.tables;
  return {
    async append(rows) {
      if (rows.length) await d.db.insert(jobOutput).values(rows.map((row) => ({ ...row, data: d.storable(row.data) })));
    },
    // A runner's login writes these rows, each at most 16 MiB (drizzle-pg/0007_runner_identity.sql): a page of many big
    // ones stops at OUTPUT_PAGE_BYTES rather than being read whole into the server's memory.
    async after(jobId, seq, limit) {
      const rows = await d.rows<Omit<JobOutputRow, "at"> & { at: number | string }>(sql`
        select job_id as "jobId", seq, stream, data, at from (
          select *, sum(octet_length(data)) over (order by seq) - octet_length(data) as before
          from ${jobOutput} where job_id = ${jobId} and seq > ${seq} order by seq limit ${limit}
        ) page where before < ${OUTPUT_PAGE_BYTES} order by seq`);
      // PostgreSQL hands a raw query's bigint columns out as text.
      return rows.map((row) => ({ ...row, at: Number(row.at) }));
    },
  };
}
