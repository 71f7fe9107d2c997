import { and, asc, count, eq, inArray, sql } from "drizzle-orm";
import type { FileChange, JobFileCounts } from "@corral/shared";
import type { Db } from "../client.js";
import { jobFileChanges, jobs, type JobFileRow } from "../schema.js";

export type NewJobFileRow = typeof jobFileChanges.$inferInsert;

const emptyCounts = (): JobFileCounts => ({ created: 0, modified: 0, deleted: 0 });

export function createJobFilesRepo(db: Db) {
  // Prepared once: every `_done`, `_run` and `corral_wait` answer lists its jobs' files.
  const ofJob = db
    .select()
    .from(jobFileChanges)
    .where(eq(jobFileChanges.jobId, sql.placeholder("jobId")))
    .orderBy(asc(jobFileChanges.path))
    .prepare();
  return {
    /** Stores the latest change of each path, in one transaction. */
    upsert(rows: NewJobFileRow[]): void {
      if (!rows.length) return;
      db.transaction((tx) => {
        for (const row of rows) {
          tx.insert(jobFileChanges)
            .values(row)
            .onConflictDoUpdate({
              target: [jobFileChanges.jobId, jobFileChanges.path],
              set: { change: row.change, size: row.size ?? null, at: row.at },
            })
            .run();
        }
      });
    },
    remove(jobId: string, paths: string[]): void {
      if (paths.length)
        db.delete(jobFileChanges)
          .where(and(eq(jobFileChanges.jobId, jobId), inArray(jobFileChanges.path, paths)))
          .run();
    },
    list(jobId: string): JobFileRow[] {
      return ofJob.all({ jobId });
    },
    /** Created / modified / deleted counts for each of the jobs (jobs with no files are absent). */
    counts(jobIds: string[]): Map<string, JobFileCounts> {
      const result = new Map<string, JobFileCounts>();
      if (!jobIds.length) return result;
      const rows = db
        .select({ jobId: jobFileChanges.jobId, change: jobFileChanges.change, n: count() })
        .from(jobFileChanges)
        .where(inArray(jobFileChanges.jobId, jobIds))
        .groupBy(jobFileChanges.jobId, jobFileChanges.change)
        .all();
      for (const row of rows) {
        const counts = result.get(row.jobId) ?? emptyCounts();
        counts[row.change as FileChange] = row.n;
        result.set(row.jobId, counts);
      }
      return result;
    },
    /** Every workdir a job has used, with how many jobs used it. */
    jobWorkdirs(): { workdir: string; jobs: number }[] {
      return db.select({ workdir: jobs.workdir, jobs: sql<number>`count(*)` }).from(jobs).groupBy(jobs.workdir).orderBy(asc(jobs.workdir)).all();
    },
    /**
     * Every workdir (or only those of `workdirs`) with the runner of each group of its jobs (null:
     * still waiting for one) and the place of the group's newest job (its seq): the newest job says
     * on which machine the files are. Asking for a few workdirs reads their jobs alone, through the
     * index on (workdir, status), where all of them groups every job.
     */
    workdirRunners(workdirs?: string[]): { workdir: string; runner: string | null; jobs: number; newest: number }[] {
      if (workdirs?.length === 0) return [];
      return db
        .select({ workdir: jobs.workdir, runner: jobs.runner, jobs: sql<number>`count(*)`, newest: sql<number>`max(${jobs.seq})` })
        .from(jobs)
        .where(workdirs ? inArray(jobs.workdir, workdirs) : undefined)
        .groupBy(jobs.workdir, jobs.runner)
        .all();
    },
  };
}

export type JobFilesRepo = ReturnType<typeof createJobFilesRepo>;
