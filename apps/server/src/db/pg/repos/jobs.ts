import { and, asc, desc, eq, inArray, ne } from "drizzle-orm";
import type { Async } from "../../async.js";
import type { JobsRepo } from "../../repos/jobs.js";
import type { PgExecutor } from "../client.js";
import { jobAttempts, jobs } from "../schema.js";
import { inOrder, ORDERED } from "./in-order.js";
import { createPgJobList } from "./job-list.js";
import { bytewise, stored } from "./sql.js";

export function createPgJobsRepo(db: PgExecutor): Async<JobsRepo> {
  return {
    // seq is the registry's to number (the SQLite trigger overwrites any value given, PostgreSQL refuses one).
    async insert({ seq: _seq, ...row }) {
      return stored(await inOrder(db, ORDERED.jobs, (tx) => tx.insert(jobs).values(row).returning()));
    },
    async get(id) {
      const [row] = await db.select().from(jobs).where(eq(jobs.id, id)).limit(1);
      return row;
    },
    async update(id, { seq: _seq, ...patch }) {
      const [row] = await db.update(jobs).set(patch).where(eq(jobs.id, id)).returning();
      return row;
    },
    async updateClaimed(id, runner, { seq: _seq, ...patch }) {
      const [row] = await db
        .update(jobs)
        .set(patch)
        .where(and(eq(jobs.id, id), eq(jobs.runner, runner), ne(jobs.status, "lost")))
        .returning();
      return row;
    },
    list: createPgJobList(db),
    async thread(conversationId, limit) {
      const rows = await db.select().from(jobs).where(eq(jobs.conversationId, conversationId)).orderBy(desc(jobs.seq)).limit(limit);
      return rows.reverse();
    },
    async group(groupId) {
      return db.select().from(jobs).where(eq(jobs.groupId, groupId)).orderBy(asc(jobs.seq));
    },
    // SQLite reads jobs_workdir_status_idx in order: the oldest queued job, else the oldest running one.
    async activeInWorkdir(workdir) {
      const [row] = await db
        .select()
        .from(jobs)
        .where(and(eq(jobs.workdir, workdir), inArray(jobs.status, ["queued", "running"])))
        .orderBy(asc(jobs.status), asc(jobs.seq))
        .limit(1);
      return row;
    },
    async startAttempt(row) {
      await db.insert(jobAttempts).values(row).onConflictDoNothing();
    },
    async endAttempt(jobId, attempt, patch) {
      await db
        .update(jobAttempts)
        .set(patch)
        .where(and(eq(jobAttempts.jobId, jobId), eq(jobAttempts.attempt, attempt)));
    },
    async attempts(jobId) {
      return db.select().from(jobAttempts).where(eq(jobAttempts.jobId, jobId)).orderBy(asc(jobAttempts.attempt));
    },
    async hasJobs(agent) {
      const [row] = await db.select({ id: jobs.id }).from(jobs).where(eq(jobs.agent, agent)).limit(1);
      return row !== undefined;
    },
    // Ties in created_at as SQLite reads them from jobs_status_idx: by status, then in the order added.
    async withStatus(statuses) {
      return db
        .select()
        .from(jobs)
        .where(inArray(jobs.status, statuses))
        .orderBy(asc(jobs.createdAt), asc(bytewise(jobs.status)), asc(jobs.seq));
    },
  };
}
