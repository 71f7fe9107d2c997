import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { JobStatus } from "@corral/shared";
import type { Db } from "../client.js";
import { createJobList } from "./job-list.js";
import { jobAttempts, jobs, type JobAttemptRow, type JobRow } from "../schema.js";

export type NewJobRow = typeof jobs.$inferInsert;
export type JobPatch = Partial<Omit<NewJobRow, "id" | "agent" | "createdAt">>;

export function createJobsRepo(db: Db) {
  // Prepared once: these run several times for every job.
  const byId = db
    .select()
    .from(jobs)
    .where(eq(jobs.id, sql.placeholder("id")))
    .prepare();
  return {
    insert(row: NewJobRow): JobRow {
      return db.insert(jobs).values(row).returning().get();
    },
    get(id: string): JobRow | undefined {
      return byId.get({ id });
    },
    update(id: string, patch: JobPatch): JobRow | undefined {
      return db.update(jobs).set(patch).where(eq(jobs.id, id)).returning().get();
    },
    list: createJobList(db),
    /** A queued or running job in this workdir, if any. */
    activeInWorkdir(workdir: string): JobRow | undefined {
      return db
        .select()
        .from(jobs)
        .where(and(eq(jobs.workdir, workdir), inArray(jobs.status, ["queued", "running"])))
        .limit(1)
        .get();
    },
    startAttempt(row: typeof jobAttempts.$inferInsert): void {
      db.insert(jobAttempts).values(row).onConflictDoNothing().run();
    },
    endAttempt(jobId: string, attempt: number, patch: Partial<typeof jobAttempts.$inferInsert>): void {
      db.update(jobAttempts)
        .set(patch)
        .where(and(eq(jobAttempts.jobId, jobId), eq(jobAttempts.attempt, attempt)))
        .run();
    },
    attempts(jobId: string): JobAttemptRow[] {
      return db.select().from(jobAttempts).where(eq(jobAttempts.jobId, jobId)).orderBy(asc(jobAttempts.attempt)).all();
    },
    hasJobs(agent: string): boolean {
      return db.select({ id: jobs.id }).from(jobs).where(eq(jobs.agent, agent)).limit(1).get() !== undefined;
    },
    withStatus(statuses: JobStatus[]): JobRow[] {
      return db.select().from(jobs).where(inArray(jobs.status, statuses)).orderBy(asc(jobs.createdAt)).all();
    },
  };
}

export type JobsRepo = ReturnType<typeof createJobsRepo>;
