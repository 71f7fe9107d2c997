import { sql } from "drizzle-orm";
import type { Async } from "../../async.js";
import { type createJobOutputRepo, OUTPUT_PAGE_BYTES } from "../../repos/job-output.js";
import type { PgExecutor } from "../client.js";
import type { JobOutputRow } from "../../schema.js";
import { jobOutput } from "../schema.js";
import { withoutNul } from "./nul.js";

export function createPgJobOutputRepo(db: PgExecutor): Async<ReturnType<typeof createJobOutputRepo>> {
  return {
    async append(rows) {
      if (rows.length) await db.insert(jobOutput).values(rows.map((row) => ({ ...row, data: withoutNul(row.data) })));
    },
    // A runner's login writes these rows, each at most 16 MiB (drizzle-pg/0007_runner_identity.sql): a page of many big
    // ones stops at OUTPUT_PAGE_BYTES rather than being read whole into the server's memory.
    async after(jobId, seq, limit) {
      const { rows } = await db.execute<Omit<JobOutputRow, "at"> & { at: string }>(sql`
        select job_id as "jobId", seq, stream, data, at from (
          select *, sum(octet_length(data)) over (order by seq) - octet_length(data) as before
          from ${jobOutput} where job_id = ${jobId} and seq > ${seq} order by seq limit ${limit}
        ) page where before < ${OUTPUT_PAGE_BYTES} order by seq`);
      // A raw query gets bigint columns as text (node-postgres); the typed reads get numbers.
      return rows.map((row) => ({ ...row, at: Number(row.at) }));
    },
  };
}
