import { and, asc, count, eq, inArray, isNotNull, isNull, min, ne, notInArray, or, sql } from "drizzle-orm";
import type { Async } from "../../async.js";
import type { createRunnersRepo } from "../../repos/runners.js";
import type { PgExecutor } from "../client.js";
import { CANCEL_CHANNEL, QUEUE_CHANNEL } from "../job-changes.js";
import { agents, jobs, runners } from "../schema.js";

/**
 * Advisory lock class a claim takes for an agent (with the hash of its name) while it counts the
 * agent's jobs and takes one: claims for the same agent from several runners then count one after
 * another, so together they never pass its maxConcurrent.
 */
const AGENT_CLAIMS = 7_433_103;

export function createPgRunnersRepo(db: PgExecutor): Async<ReturnType<typeof createRunnersRepo>> {
  // Inside a transaction PostgreSQL sends it at commit (never on rollback), and a label told twice there once.
  const announceQueued = async (labels: string[]) => {
    for (const label of new Set(labels)) await db.execute(sql`select pg_notify(${QUEUE_CHANNEL}, ${label})`);
  };
  /** The names of agents with a runner label (`agent`'s alone, if it has one). */
  const labelledAgents = (agent?: string) =>
    db
      .select({ name: agents.name })
      .from(agents)
      .where(and(isNotNull(agents.runnerLabel), agent === undefined ? undefined : eq(agents.name, agent)));
  return {
    async register(row) {
      await db.insert(runners).values(row);
    },
    async registerLocal(row) {
      const { id: _, ...fresh } = row;
      await db.insert(runners).values(row).onConflictDoUpdate({ target: runners.id, set: fresh });
    },
    async heartbeat(id, at) {
      return ((await db.update(runners).set({ heartbeatAt: at }).where(eq(runners.id, id))).rowCount ?? 0) > 0;
    },
    async list() {
      return db.select().from(runners).orderBy(asc(runners.startedAt), asc(runners.id));
    },
    async get(id) {
      const [row] = await db.select().from(runners).where(eq(runners.id, id));
      return row;
    },
    async claim(runner, labels) {
      if (!labels.length) return undefined;
      // Its own transaction (a savepoint inside the registry's): the agent's lock is held until the claim is stored.
      return db.transaction(async (tx) => {
        const waiting = await tx
          .select({ agent: jobs.agent, limit: agents.maxConcurrent })
          .from(jobs)
          .innerJoin(agents, eq(agents.name, jobs.agent))
          .where(and(eq(jobs.status, "queued"), isNull(jobs.runner), inArray(agents.runnerLabel, labels)))
          .groupBy(jobs.agent, agents.maxConcurrent)
          .orderBy(min(jobs.seq));
        for (const { agent, limit } of waiting) {
          await tx.execute(sql`select pg_advisory_xact_lock(${AGENT_CLAIMS}, hashtext(${agent}))`);
          const [busy] = await tx
            .select({ n: count() })
            .from(jobs)
            .where(and(eq(jobs.agent, agent), or(eq(jobs.status, "running"), and(eq(jobs.status, "queued"), isNotNull(jobs.runner)))));
          if ((busy?.n ?? 0) >= limit) continue;
          // SKIP LOCKED: a job another transaction is claiming or starting is passed over, not waited for.
          const [next] = await tx
            .select({ id: jobs.id })
            .from(jobs)
            .where(and(eq(jobs.agent, agent), eq(jobs.status, "queued"), isNull(jobs.runner)))
            .orderBy(asc(jobs.seq))
            .limit(1)
            .for("update", { skipLocked: true });
          if (!next) continue;
          const [row] = await tx.update(jobs).set({ runner }).where(eq(jobs.id, next.id)).returning();
          return row;
        }
        return undefined;
      });
    },
    async releaseQueued(runner, agent) {
      const released = await db
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
        .returning();
      if (!released.length) return released;
      const labelled = await db
        .selectDistinct({ label: agents.runnerLabel })
        .from(agents)
        .where(and(inArray(agents.name, [...new Set(released.map((r) => r.agent))]), isNotNull(agents.runnerLabel)));
      await announceQueued(labelled.map((r) => r.label).filter((label) => label !== null));
      return released;
    },
    async takeQueued(runner, agent) {
      // A runner's claim holds the job's row (FOR UPDATE) until it commits; this update then finds it claimed.
      const taken = await db
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
        .returning();
      return taken.sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));
    },
    async heldElsewhere(agent, runner) {
      const [row] = await db
        .select({ n: count() })
        .from(jobs)
        .where(and(eq(jobs.agent, agent), inArray(jobs.status, ["queued", "running"]), isNotNull(jobs.runner), ne(jobs.runner, runner)));
      return row?.n ?? 0;
    },
    announceQueued,
    async askToStop(jobId) {
      await db.execute(sql`select pg_notify(${CANCEL_CHANNEL}, ${jobId})`);
    },
    async markStopped(id, at) {
      return (
        ((
          await db
            .update(runners)
            .set({ stoppedAt: at })
            .where(and(eq(runners.id, id), isNull(runners.stoppedAt)))
        ).rowCount ?? 0) > 0
      );
    },
  };
}
