import { and, asc, eq, gt } from "drizzle-orm";
import type { Async } from "../../async.js";
import type { createJobOutputRepo } from "../../repos/job-output.js";
import type { PgExecutor } from "../client.js";
import { jobOutput } from "../schema.js";
import { withoutNul } from "./nul.js";

export function createPgJobOutputRepo(db: PgExecutor): Async<ReturnType<typeof createJobOutputRepo>> {
  return {
    async append(rows) {
      if (rows.length) await db.insert(jobOutput).values(rows.map((row) => ({ ...row, data: withoutNul(row.data) })));
    },
    async after(jobId, seq, limit) {
      return db
        .select()
        .from(jobOutput)
        .where(and(eq(jobOutput.jobId, jobId), gt(jobOutput.seq, seq)))
        .orderBy(asc(jobOutput.seq))
        .limit(limit);
    },
  };
}
