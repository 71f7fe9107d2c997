import { and, asc, count, eq, inArray, isNotNull, isNull, ne, notInArray, or } from "drizzle-orm";
import type { Db } from "../client.js";
import { agents, jobs, runners, type JobRow, type RunnerRow } from "../schema.js";

/**
 * The runners that announced themselves: `local`, the server, and the `corral runner` processes
 * (they need PostgreSQL; with SQLite `local` is the only one).
 */
export function createRunnersRepo(db: Db) {
  /** The names of agents with a runner label (`agent`'s alone, if it has one). */
  const labelledAgents = (agent?: string) =>
    db
      .select({ name: agents.name })
      .from(agents)
      .where(and(isNotNull(agents.runnerLabel), agent === undefined ? undefined : eq(agents.name, agent)));
  return {
    /** A runner announcing itself as it starts; its id is new to every start. */
    register(row: RunnerRow): void {
      db.insert(runners).values(row).run();
    },
    /** The server's own runner (`local`) at each start: one row, kept, brought up to date. */
    registerLocal(row: RunnerRow): void {
      const { id: _, ...fresh } = row;
      db.insert(runners).values(row).onConflictDoUpdate({ target: runners.id, set: fresh }).run();
    },
    /** Its sign of life; false when no such runner is registered. */
    heartbeat(id: string, at: number): boolean {
      return db.update(runners).set({ heartbeatAt: at }).where(eq(runners.id, id)).run().changes > 0;
    },
    /** Every runner, the first started first. */
    list(): RunnerRow[] {
      return db.select().from(runners).orderBy(asc(runners.startedAt), asc(runners.id)).all();
    },
    get(id: string): RunnerRow | undefined {
      return db.select().from(runners).where(eq(runners.id, id)).get();
    },
    /**
     * Runner `runner` takes the oldest queued job no runner has claimed whose agent asks for one of
     * `labels`, if that agent is under its maxConcurrent counting every runner's jobs (running, or
     * claimed and about to start) and the server's: the job's `runner` is set, its status left
     * queued for the runner to start. Undefined when there is none it may take. SQLite holds one
     * writer at a time, so the read and the write cannot be interleaved with another claim.
     */
    claim(runner: string, labels: string[]): JobRow | undefined {
      if (!labels.length) return undefined;
      const waiting = db
        .select({ id: jobs.id, agent: jobs.agent, limit: agents.maxConcurrent })
        .from(jobs)
        .innerJoin(agents, eq(agents.name, jobs.agent))
        .where(and(eq(jobs.status, "queued"), isNull(jobs.runner), inArray(agents.runnerLabel, labels)))
        .orderBy(asc(jobs.seq))
        .all();
      const full = new Set<string>();
      for (const job of waiting) {
        if (full.has(job.agent)) continue;
        const [busy] = db
          .select({ n: count() })
          .from(jobs)
          .where(and(eq(jobs.agent, job.agent), or(eq(jobs.status, "running"), and(eq(jobs.status, "queued"), isNotNull(jobs.runner)))))
          .all();
        if ((busy?.n ?? 0) >= job.limit) {
          full.add(job.agent);
          continue;
        }
        return db
          .update(jobs)
          .set({ runner })
          .where(and(eq(jobs.id, job.id), isNull(jobs.runner)))
          .returning()
          .get();
      }
      return undefined;
    },
    /**
     * Gives back the jobs runner `runner` claimed but never started (it is stopping): another runner
     * may take them (PostgreSQL tells the runners of their labels, announceQueued). With `agent`
     * (the server's, that agent given a runner label): its jobs that never started, while it has
     * a label — a job waiting out a retry finishes its attempts where it ran.
     */
    releaseQueued(runner: string, agent?: string): JobRow[] {
      return db
        .update(jobs)
        .set({ runner: null })
        .where(
          and(
            eq(jobs.runner, runner),
            eq(jobs.status, "queued"),
            // An agent's only while it has a label: a label removed again meanwhile keeps them here (its takeQueued may have run first).
            agent === undefined ? undefined : and(inArray(jobs.agent, labelledAgents(agent)), isNull(jobs.startedAt)),
          ),
        )
        .returning()
        .all();
    },
    /**
     * Runner `runner` (the server's, `local`) takes the queued jobs no runner claimed of `agent`,
     * which lost its runner label, or without `agent` of every agent without a label (found at
     * start), oldest first. A job a runner claims at the same moment is that runner's.
     */
    takeQueued(runner: string, agent?: string): JobRow[] {
      return db
        .update(jobs)
        .set({ runner })
        .where(
          and(
            eq(jobs.status, "queued"),
            isNull(jobs.runner),
            // Only agents without a label: one given a label again meanwhile keeps its jobs for the runners (its releaseQueued may have run first).
            agent === undefined ? undefined : eq(jobs.agent, agent),
            notInArray(jobs.agent, labelledAgents()),
          ),
        )
        .returning()
        .all()
        .sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));
    },
    /**
     * How many of `agent`'s jobs runners other than `runner` hold (claimed, running, or waiting out a
     * retry): with the ones `runner` runs, they count against the agent's maxConcurrent.
     */
    heldElsewhere(agent: string, runner: string): number {
      const [row] = db
        .select({ n: count() })
        .from(jobs)
        .where(and(eq(jobs.agent, agent), inArray(jobs.status, ["queued", "running"]), isNotNull(jobs.runner), ne(jobs.runner, runner)))
        .all();
      return row?.n ?? 0;
    },
    /**
     * Tells the runners with one of `labels` that a job waits for them (PostgreSQL: NOTIFY, sent
     * when the transaction commits), so they claim it at once rather than at their next poll.
     * SQLite has no runners: nothing to tell.
     */
    announceQueued(_labels: string[]): void {},
    /**
     * Tells the runner holding job `jobId` that it was asked to stop (PostgreSQL: NOTIFY, sent when
     * the transaction commits). SQLite has no runners: nothing to tell.
     */
    askToStop(_jobId: string): void {},
    /** It said it was stopping; the first time it said so is kept. */
    markStopped(id: string, at: number): boolean {
      const row = db.select({ stoppedAt: runners.stoppedAt }).from(runners).where(eq(runners.id, id)).get();
      if (!row || row.stoppedAt !== null) return false;
      return db.update(runners).set({ stoppedAt: at }).where(eq(runners.id, id)).run().changes > 0;
    },
  };
}
