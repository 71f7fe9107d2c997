import { and, asc, desc, eq, inArray, ne, sql } from "drizzle-orm";
import type { Dialect, Prepared } from "../dialect.js";
import type { JobsRepo, NewJobRow } from "../registry.js";
import { stored } from "./rows.js";

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
function preparedByShape<R>(prepare: (set: Values) => Prepared<R>): (values: Values, extra?: Values) => Promise<R> {
  const cache = new Map<string, Prepared<R>>();
  return (values, extra) => {
    const { key, set, params } = shapeOf(values);
    let statement = cache.get(key);
    if (!statement) {
      statement = prepare(set);
      cache.set(key, statement);
    }
    return statement({ ...params, ...extra });
  };
}

export function createJobsRepo(d: Dialect): JobsRepo {
  const { jobs, jobAttempts } = d.tables;
  // Prepared once: these run several times for every job.
  const byId = d.prepare((db) =>
    db
      .select()
      .from(jobs)
      .where(eq(jobs.id, sql.placeholder("id"))),
  );
  // jobs_workdir_status_idx read in order: the oldest queued job, else the oldest running one.
  const activeIn = d.prepare((db) =>
    db
      .select()
      .from(jobs)
      .where(and(eq(jobs.workdir, sql.placeholder("workdir")), inArray(jobs.status, ["queued", "running"])))
      .orderBy(asc(jobs.status), asc(jobs.seq))
      .limit(1),
  );
  const launchedTogether = d.prepare((db) =>
    db
      .select()
      .from(jobs)
      .where(eq(jobs.groupId, sql.placeholder("groupId")))
      .orderBy(asc(jobs.seq)),
  );
  const relaunchedFrom = d.prepare((db) =>
    db
      .select()
      .from(jobs)
      .where(eq(jobs.relaunchOf, sql.placeholder("relaunchOf")))
      .orderBy(desc(jobs.seq))
      .limit(sql.placeholder("limit")),
  );
  const conversation = d.prepare((db) =>
    db
      .select()
      .from(jobs)
      .where(eq(jobs.conversationId, sql.placeholder("conversationId")))
      .orderBy(desc(jobs.seq))
      .limit(sql.placeholder("limit")),
  );
  const inserting = (on: Dialect) =>
    preparedByShape((set) =>
      on.prepare((db) =>
        db
          .insert(jobs)
          .values(set as NewJobRow)
          .returning(),
      ),
    );
  // The id's placeholder cannot clash with a column's: `id` is never part of a patch.
  const updating = preparedByShape((set) =>
    d.prepare((db) =>
      db
        .update(jobs)
        .set(set)
        .where(eq(jobs.id, sql.placeholder("id")))
        .returning(),
    ),
  );
  const insertingAttempt = preparedByShape((set) =>
    d.prepare((db) =>
      db
        .insert(jobAttempts)
        .values(set as typeof jobAttempts.$inferInsert)
        .onConflictDoNothing(),
    ),
  );
  const updatingAttempt = preparedByShape((set) =>
    d.prepare((db) =>
      db
        .update(jobAttempts)
        .set(set)
        .where(and(eq(jobAttempts.jobId, sql.placeholder("jobId")), eq(jobAttempts.attempt, sql.placeholder("attempt")))),
    ),
  );
  const insertingHere = inserting(d);
  return {
    // seq is the registry's to number (SQLite's trigger overwrites any value given, PostgreSQL refuses one).
    async insert({ seq: _seq, ...row }) {
      // The seq is a reader's cursor: seqs must commit in the order they are drawn.
      return stored(await d.inOrder("jobs", (inside) => (inside === d ? insertingHere : inserting(inside))(row)));
    },
    async get(id) {
      const [row] = await byId({ id });
      return row;
    },
    async update(id, { seq: _seq, ...patch }) {
      const [row] = await updating(patch, { id });
      return row;
    },
    async updateClaimed(id, runner, { seq: _seq, ...patch }) {
      const [row] = await d.db
        .update(jobs)
        .set(patch)
        .where(and(eq(jobs.id, id), eq(jobs.runner, runner), ne(jobs.status, "lost")))
        .returning();
      return row;
    },
    async list(query) {
      const { page, total, totalCapped } = await d.jobPage(query);
      const rows = page.length ? await d.db.select().from(jobs).where(inArray(jobs.seq, page)).orderBy(desc(jobs.seq)) : [];
      return { rows, total, totalCapped };
    },
    async thread(conversationId, limit) {
      return (await conversation({ conversationId, limit })).reverse();
    },
    async group(groupId) {
      return launchedTogether({ groupId });
    },
    async relaunches(relaunchOf, limit) {
      return (await relaunchedFrom({ relaunchOf, limit })).reverse();
    },
    async activeInWorkdir(workdir) {
      const [row] = await activeIn({ workdir });
      return row;
    },
    async startAttempt(row) {
      await insertingAttempt(row);
    },
    async endAttempt(jobId, attempt, patch) {
      await updatingAttempt(patch, { jobId, attempt });
    },
    async attempts(jobId) {
      return d.db.select().from(jobAttempts).where(eq(jobAttempts.jobId, jobId)).orderBy(asc(jobAttempts.attempt));
    },
    async hasJobs(agent) {
      const [row] = await d.db.select({ id: jobs.id }).from(jobs).where(eq(jobs.agent, agent)).limit(1);
      return row !== undefined;
    },
    // Ties in created_at by status (bytewise), then in the order added: as SQLite reads them from jobs_status_idx.
    async withStatus(statuses) {
      return d.db
        .select()
        .from(jobs)
        .where(inArray(jobs.status, statuses))
        .orderBy(asc(jobs.createdAt), asc(d.bytewise(jobs.status)), asc(jobs.seq));
    },
    async withWorktree(state) {
      return d.db
        .select()
        .from(jobs)
        .where(eq(d.jsonText(jobs.worktree, "state"), state))
        .orderBy(asc(jobs.seq));
    },
  };
}
