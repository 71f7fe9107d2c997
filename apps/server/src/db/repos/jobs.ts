import { and, asc, desc, eq, inArray, ne, sql } from "drizzle-orm";
import type { JobStatus } from "@corral/shared";
import type { Db } from "../client.js";
import { createJobList } from "./job-list.js";
import { jobAttempts, jobs, type JobAttemptRow, type JobRow } from "../schema.js";

export type NewJobRow = typeof jobs.$inferInsert;
export type JobPatch = Partial<Omit<NewJobRow, "id" | "agent" | "createdAt">>;

type Values = Record<string, unknown>;

/**
 * Each value as a placeholder, except null: a JSON column would encode it as the text `null`.
 * Keys whose value is undefined are left out, as drizzle leaves them out of a query.
 */
function shapeOf(values: Values): { key: string; set: Values; params: Values } {
  const set: Values = {};
  const params: Values = {};
  const parts: string[] = [];
  for (const [column, value] of Object.entries(values)) {
    if (value === undefined) continue;
    if (value === null) {
      set[column] = sql`null`;
      parts.push(`${column}=null`);
    } else {
      set[column] = sql.placeholder(column);
      params[column] = value;
      parts.push(column);
    }
  }
  return { key: parts.join(","), set, params };
}

/**
 * Statements prepared once per shape (the columns written, and which of them are null): a job's
 * writes come in a handful of shapes, and building and preparing the SQL cost more than running it.
 */
function preparedByShape<S>(prepare: (set: Values) => S): (values: Values) => { statement: S; params: Values } {
  const cache = new Map<string, S>();
  return (values) => {
    const { key, set, params } = shapeOf(values);
    let statement = cache.get(key);
    if (!statement) {
      statement = prepare(set);
      cache.set(key, statement);
    }
    return { statement, params };
  };
}

export function createJobsRepo(db: Db) {
  // Prepared once: these run several times for every job.
  const byId = db
    .select()
    .from(jobs)
    .where(eq(jobs.id, sql.placeholder("id")))
    .prepare();
  const activeIn = db
    .select()
    .from(jobs)
    .where(and(eq(jobs.workdir, sql.placeholder("workdir")), inArray(jobs.status, ["queued", "running"])))
    .limit(1)
    .prepare();
  const launchedTogether = db
    .select()
    .from(jobs)
    .where(eq(jobs.groupId, sql.placeholder("groupId")))
    .orderBy(jobs.seq)
    .prepare();
  const conversation = db
    .select()
    .from(jobs)
    .where(eq(jobs.conversationId, sql.placeholder("conversationId")))
    .orderBy(desc(jobs.seq))
    .limit(sql.placeholder("limit"))
    .prepare();
  const inserting = preparedByShape((set) =>
    db
      .insert(jobs)
      .values(set as NewJobRow)
      .returning()
      .prepare(),
  );
  // The id's placeholder cannot clash with a column's: `id` is never part of a patch.
  const updating = preparedByShape((set) =>
    db
      .update(jobs)
      .set(set)
      .where(eq(jobs.id, sql.placeholder("id")))
      .returning()
      .prepare(),
  );
  const insertingAttempt = preparedByShape((set) =>
    db
      .insert(jobAttempts)
      .values(set as typeof jobAttempts.$inferInsert)
      .onConflictDoNothing()
      .prepare(),
  );
  const updatingAttempt = preparedByShape((set) =>
    db
      .update(jobAttempts)
      .set(set)
      .where(and(eq(jobAttempts.jobId, sql.placeholder("jobId")), eq(jobAttempts.attempt, sql.placeholder("attempt"))))
      .prepare(),
  );
  return {
    insert(row: NewJobRow): JobRow {
      const { statement, params } = inserting(row);
      return statement.get(params) as JobRow;
    },
    get(id: string): JobRow | undefined {
      return byId.get({ id });
    },
    update(id: string, patch: JobPatch): JobRow | undefined {
      const { statement, params } = updating(patch);
      return statement.get({ ...params, id });
    },
    /**
     * The patch, only while runner `runner` holds the job and it is not `lost`: a runner declared
     * lost (silent past its lease) can no longer write over that. Undefined when the write was refused.
     */
    updateClaimed(id: string, runner: string, { seq: _seq, ...patch }: JobPatch): JobRow | undefined {
      return db
        .update(jobs)
        .set(patch)
        .where(and(eq(jobs.id, id), eq(jobs.runner, runner), ne(jobs.status, "lost")))
        .returning()
        .get();
    },
    list: createJobList(db),
    /** The newest `limit` jobs of a conversation, oldest first. */
    thread(conversationId: string, limit: number): JobRow[] {
      return conversation.all({ conversationId, limit }).reverse();
    },
    /** The jobs of one launch to several agents, in the order they were launched. */
    group(groupId: string): JobRow[] {
      return launchedTogether.all({ groupId });
    },
    /** A queued or running job in this workdir, if any. */
    activeInWorkdir(workdir: string): JobRow | undefined {
      return activeIn.get({ workdir });
    },
    startAttempt(row: typeof jobAttempts.$inferInsert): void {
      const { statement, params } = insertingAttempt(row);
      statement.run(params);
    },
    endAttempt(jobId: string, attempt: number, patch: Omit<Partial<typeof jobAttempts.$inferInsert>, "jobId" | "attempt">): void {
      const { statement, params } = updatingAttempt(patch);
      statement.run({ ...params, jobId, attempt });
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
