import { and, asc, count, eq, ne, sql } from "drizzle-orm";
import type { FileChange, JobFileCounts } from "@corral/shared";
import type { Dialect } from "../dialect.js";
import type { JobFilesRepo } from "../registry.js";
import { lastOfEach } from "./rows.js";

/**
 * The row that says a job's list was cut: no file has an empty relative path, so this one is
 * never a file; its `size` is the number of files the list stopped at.
 */
export const CUT_MARK_PATH = "";

const emptyCounts = (): JobFileCounts => ({ created: 0, modified: 0, deleted: 0 });

export function createJobFilesRepo(d: Dialect): JobFilesRepo {
  const { jobFileChanges, jobs } = d.tables;
  // Prepared once: every `_done`, `_run` and `corral_wait` answer lists its jobs' files.
  const ofJob = d.prepare((db) =>
    db
      .select()
      .from(jobFileChanges)
      .where(and(eq(jobFileChanges.jobId, sql.placeholder("jobId")), ne(jobFileChanges.path, CUT_MARK_PATH)))
      .orderBy(asc(d.bytewise(jobFileChanges.path))),
  );
  return {
    /**
     * One statement (all or none), its rows sent as one parameter: a job's final scan can list
     * more files than a statement takes parameters. (`where true`: SQLite would read the `on` of
     * `on conflict` as a join's.)
     */
    async upsert(rows) {
      const latest = lastOfEach(rows, (r) => `${r.jobId}\u0000${r.path}`);
      if (!latest.length) return;
      const source = d.rowSource(
        { job_id: "text", path: "text", change: "text", size: "bigint", at: "bigint" },
        latest.map((r) => [r.jobId, r.path, r.change, r.size ?? null, r.at]),
      );
      await d.run(sql`
        insert into ${jobFileChanges} (job_id, path, change, size, at)
        select job_id, path, change, size, at from ${source} as latest where true
        on conflict (job_id, path) do update set change = excluded.change, size = excluded.size, at = excluded.at`);
    },
    async remove(jobId, paths) {
      if (paths.length) await d.db.delete(jobFileChanges).where(and(eq(jobFileChanges.jobId, jobId), d.oneOf(jobFileChanges.path, paths)));
    },
    async list(jobId) {
      return ofJob({ jobId });
    },
    async markCut(jobId, limit, at) {
      await d.db.insert(jobFileChanges).values({ jobId, path: CUT_MARK_PATH, change: "created", size: limit, at }).onConflictDoNothing();
    },
    async cutAt(jobId) {
      const [row] = await d.db
        .select({ size: jobFileChanges.size })
        .from(jobFileChanges)
        .where(and(eq(jobFileChanges.jobId, jobId), eq(jobFileChanges.path, CUT_MARK_PATH)));
      return row ? (row.size ?? 0) : null;
    },
    async counts(jobIds) {
      const result = new Map<string, JobFileCounts>();
      if (!jobIds.length) return result;
      const rows = await d.db
        .select({ jobId: jobFileChanges.jobId, change: jobFileChanges.change, n: count() })
        .from(jobFileChanges)
        .where(and(d.oneOf(jobFileChanges.jobId, jobIds), ne(jobFileChanges.path, CUT_MARK_PATH)))
        .groupBy(jobFileChanges.jobId, jobFileChanges.change)
        .orderBy(d.bytewise(jobFileChanges.jobId), d.bytewise(jobFileChanges.change));
      for (const row of rows) {
        const counts = result.get(row.jobId) ?? emptyCounts();
        counts[row.change as FileChange] = row.n;
        result.set(row.jobId, counts);
      }
      return result;
    },
    async jobWorkdirs() {
      return d.db
        .select({ workdir: jobs.workdir, jobs: count(), lastJobAt: d.wholeNumber(sql`max(${jobs.createdAt})`) })
        .from(jobs)
        .groupBy(jobs.workdir)
        .orderBy(asc(d.bytewise(jobs.workdir)));
    },
    /** Asking for a few workdirs reads their jobs alone, through the index on (workdir, status), where all of them groups every job. */
    async workdirRunners(workdirs) {
      if (workdirs?.length === 0) return [];
      return d.db
        .select({ workdir: jobs.workdir, runner: jobs.runner, jobs: count(), newest: d.wholeNumber(sql`max(${jobs.seq})`) })
        .from(jobs)
        .where(workdirs ? d.oneOf(jobs.workdir, workdirs) : undefined)
        .groupBy(jobs.workdir, jobs.runner);
    },
  };
}
