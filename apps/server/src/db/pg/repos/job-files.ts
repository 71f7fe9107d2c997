import { and, asc, count, eq, inArray, ne, sql } from "drizzle-orm";
import type { FileChange, JobFileCounts } from "@corral/shared";
import type { Async } from "../../async.js";
import { CUT_MARK_PATH, type createJobFilesRepo } from "../../repos/job-files.js";
import type { PgExecutor } from "../client.js";
import { jobFileChanges, jobs } from "../schema.js";
import { bytewise, lastOfEach } from "./sql.js";

const emptyCounts = (): JobFileCounts => ({ created: 0, modified: 0, deleted: 0 });

export function createPgJobFilesRepo(db: PgExecutor): Async<ReturnType<typeof createJobFilesRepo>> {
  return {
    /**
     * Stores the latest change of each path in one statement (all or none). The rows travel as
     * one array per column: a job's final scan can list more files than a statement takes
     * parameters (65,535).
     */
    async upsert(rows) {
      const latest = lastOfEach(rows, (r) => `${r.jobId}\u0000${r.path}`);
      if (!latest.length) return;
      const column = <T>(pick: (row: (typeof latest)[number]) => T) => sql.param(latest.map(pick));
      await db.execute(sql`
        insert into ${jobFileChanges} (job_id, path, change, size, at)
        select * from unnest(${column((r) => r.jobId)}::text[], ${column((r) => r.path)}::text[], ${column((r) => r.change)}::text[],
          ${column((r) => r.size ?? null)}::bigint[], ${column((r) => r.at)}::bigint[])
        on conflict (job_id, path) do update set change = excluded.change, size = excluded.size, at = excluded.at`);
    },
    async remove(jobId, paths) {
      if (paths.length) {
        await db.delete(jobFileChanges).where(and(eq(jobFileChanges.jobId, jobId), sql`${jobFileChanges.path} = any(${sql.param(paths)}::text[])`));
      }
    },
    async list(jobId) {
      return db
        .select()
        .from(jobFileChanges)
        .where(and(eq(jobFileChanges.jobId, jobId), ne(jobFileChanges.path, CUT_MARK_PATH)))
        .orderBy(asc(bytewise(jobFileChanges.path)));
    },
    async markCut(jobId, limit, at) {
      await db.insert(jobFileChanges).values({ jobId, path: CUT_MARK_PATH, change: "created", size: limit, at }).onConflictDoNothing();
    },
    async cutAt(jobId) {
      const [row] = await db
        .select({ size: jobFileChanges.size })
        .from(jobFileChanges)
        .where(and(eq(jobFileChanges.jobId, jobId), eq(jobFileChanges.path, CUT_MARK_PATH)));
      return row ? (row.size ?? 0) : null;
    },
    /** Created / modified / deleted counts for each of the jobs (jobs with no files are absent). */
    async counts(jobIds) {
      const result = new Map<string, JobFileCounts>();
      if (!jobIds.length) return result;
      const rows = await db
        .select({ jobId: jobFileChanges.jobId, change: jobFileChanges.change, n: count() })
        .from(jobFileChanges)
        .where(and(inArray(jobFileChanges.jobId, jobIds), ne(jobFileChanges.path, CUT_MARK_PATH)))
        .groupBy(jobFileChanges.jobId, jobFileChanges.change)
        .orderBy(bytewise(jobFileChanges.jobId), bytewise(jobFileChanges.change));
      for (const row of rows) {
        const counts = result.get(row.jobId) ?? emptyCounts();
        counts[row.change as FileChange] = row.n;
        result.set(row.jobId, counts);
      }
      return result;
    },
    /** Every workdir a job has used, with how many jobs used it. */
    async jobWorkdirs() {
      return db
        .select({ workdir: jobs.workdir, jobs: count() })
        .from(jobs)
        .groupBy(jobs.workdir)
        .orderBy(asc(bytewise(jobs.workdir)));
    },
    async workdirRunners(workdirs) {
      if (workdirs?.length === 0) return [];
      return (
        db
          .select({ workdir: jobs.workdir, runner: jobs.runner, jobs: count(), newest: sql<number>`max(${jobs.seq})::float8` })
          .from(jobs)
          // One array parameter however many workdirs (a deep path has many ancestors); = any() is an index condition like in ().
          .where(workdirs ? sql`${jobs.workdir} = any(${sql.param(workdirs)}::text[])` : undefined)
          .groupBy(jobs.workdir, jobs.runner)
      );
    },
  };
}
