import { and, asc, count, eq, inArray, ne, sql } from "drizzle-orm";
import type { FileChange, JobFileCounts } from "@corral/shared";
import type { Db } from "../client.js";
import { jobFileChanges, jobs, type JobFileRow } from "../schema.js";

export type NewJobFileRow = typeof jobFileChanges.$inferInsert;

/**
 * The row that says a job's list was cut: no file has an empty relative path, so this one is
 * never a file; its `size` is the number of files the list stopped at.
 */
export const CUT_MARK_PATH = "";

const emptyCounts = (): JobFileCounts => ({ created: 0, modified: 0, deleted: 0 });

export function createJobFilesRepo(db: Db) {
  // Prepared once: every `_done`, `_run` and `corral_wait` answer lists its jobs' files.
  const ofJob = db
    .select()
    .from(jobFileChanges)
    .where(and(eq(jobFileChanges.jobId, sql.placeholder("jobId")), ne(jobFileChanges.path, CUT_MARK_PATH)))
    .orderBy(asc(jobFileChanges.path))
    .prepare();
  // Prepared once too: a query built per row costs a millisecond or so on the event loop, and a
  // job's burst of files is thousands of rows.
  const upsertOne = db
    .insert(jobFileChanges)
    .values({
      jobId: sql.placeholder("jobId"),
      path: sql.placeholder("path"),
      change: sql.placeholder("change"),
      size: sql.placeholder("size"),
      at: sql.placeholder("at"),
    })
    .onConflictDoUpdate({
      target: [jobFileChanges.jobId, jobFileChanges.path],
      set: { change: sql`excluded.change`, size: sql`excluded.size`, at: sql`excluded.at` },
    })
    .prepare();
  return {
    /** Stores the latest change of each path, in one transaction. */
    upsert(rows: NewJobFileRow[]): void {
      if (!rows.length) return;
      db.transaction(() => {
        for (const row of rows) upsertOne.run({ ...row, size: row.size ?? null });
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
    /** Records that the job's file list stops at `limit` files (more changed). */
    markCut(jobId: string, limit: number, at: number): void {
      db.insert(jobFileChanges).values({ jobId, path: CUT_MARK_PATH, change: "created", size: limit, at }).onConflictDoNothing().run();
    },
    /** Where the job's file list was cut (see markCut), or null when it holds every change. */
    cutAt(jobId: string): number | null {
      const row = db
        .select({ size: jobFileChanges.size })
        .from(jobFileChanges)
        .where(and(eq(jobFileChanges.jobId, jobId), eq(jobFileChanges.path, CUT_MARK_PATH)))
        .get();
      return row ? (row.size ?? 0) : null;
    },
    /** Created / modified / deleted counts for each of the jobs (jobs with no files are absent). */
    counts(jobIds: string[]): Map<string, JobFileCounts> {
      const result = new Map<string, JobFileCounts>();
      if (!jobIds.length) return result;
      const rows = db
        .select({ jobId: jobFileChanges.jobId, change: jobFileChanges.change, n: count() })
        .from(jobFileChanges)
        .where(and(inArray(jobFileChanges.jobId, jobIds), ne(jobFileChanges.path, CUT_MARK_PATH)))
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
