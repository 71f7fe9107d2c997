import { and, asc, eq, gt } from "drizzle-orm";
import type { Db } from "../client.js";
import { jobOutput, type JobOutputRow } from "../schema.js";

/**
 * The most bytes of output a page holds besides its first chunk, where a dialect cuts pages by
 * size (PostgreSQL, whose rows a runner's login writes); a page that reaches it may not be the last.
 */
export const OUTPUT_PAGE_BYTES = 16 * 1024 * 1024;

/** Runners' job output on its way to the server (see the job_output table). */
export function createJobOutputRepo(db: Db) {
  return {
    /** Appends chunks; a (job, seq) already there is refused. */
    append(rows: JobOutputRow[]): void {
      if (rows.length) db.insert(jobOutput).values(rows).run();
    },
    /** A job's chunks after `seq`, in order, at most `limit`. */
    after(jobId: string, seq: number, limit: number): JobOutputRow[] {
      return db
        .select()
        .from(jobOutput)
        .where(and(eq(jobOutput.jobId, jobId), gt(jobOutput.seq, seq)))
        .orderBy(asc(jobOutput.seq))
        .limit(limit)
        .all();
    },
  };
}
