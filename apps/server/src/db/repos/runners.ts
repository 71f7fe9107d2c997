import { and, asc, count, eq, inArray, isNotNull, isNull, min, ne, notInArray, or, sql } from "drizzle-orm";
import type { Dialect } from "../dialect.js";
import type { Claim, RunnersRepo } from "../registry.js";

export function createRunnersRepo(d: Dialect): RunnersRepo {
  const { agents, jobs, runners } = d.tables;
  // Inside a transaction the runners are told at commit (never on rollback), and a label told twice there once.
  const announceQueued = async (labels: string[]) => {
    for (const label of new Set(labels)) await d.notify("queue", label);
  };
  /** The names of agents with a runner label (`agent`'s alone, if it has one). */
  const labelledAgents = (agent?: string) =>
    d.db
      .select({ name: agents.name })
      .from(agents)
      .where(and(isNotNull(agents.runnerLabel), agent === undefined ? undefined : eq(agents.name, agent)));
  return {
    async register(row) {
      await d.db.insert(runners).values(row);
    },
    async registerLocal(row) {
      const { id: _, ...fresh } = row;
      await d.db.insert(runners).values(row).onConflictDoUpdate({ target: runners.id, set: fresh });
    },
    async heartbeat(id, at) {
      return d.changes(await d.db.update(runners).set({ heartbeatAt: at }).where(eq(runners.id, id))) > 0;
    },
    async list() {
      return d.db
        .select()
        .from(runners)
        .orderBy(asc(runners.startedAt), asc(d.bytewise(runners.id)));
    },
    async get(id) {
      const [row] = await d.db.select().from(runners).where(eq(runners.id, id));
      return row;
    },
    async claim(runner, labels) {
      if (!labels.length) return { job: undefined, more: false, waiting: false };
      // Claims for one agent from several runners count its jobs one after another, so together
      // they never pass its limit. Inside the registry's transaction (a runner's claim always is)
      // its lock already runs them one at a time across processes, and the claim is part of it
      // (PostgreSQL aborts the whole of it at a failed statement: no savepoint is needed for all or
      // none). Outside one, the claim is a transaction of its own holding each agent's lock (which a
      // claim inside the registry's transaction does not take: a runner claims only inside one).
      const claimIn = async (inside: Dialect, agentLocks: boolean): Promise<Claim> => {
        const waiting = await inside.db
          .select({ agent: jobs.agent, limit: agents.maxConcurrent, queued: count() })
          .from(jobs)
          .innerJoin(agents, eq(agents.name, jobs.agent))
          .where(and(eq(jobs.status, "queued"), isNull(jobs.runner), inArray(agents.runnerLabel, labels)))
          .groupBy(jobs.agent, agents.maxConcurrent)
          .orderBy(min(jobs.seq));
        for (const [i, { agent, limit, queued }] of waiting.entries()) {
          if (agentLocks) await inside.lock("agentClaims", agent);
          // The agent's jobs held on every runner, and of those this runner's own.
          const [busy] = await inside.db
            .select({ n: count(), mine: sql<number>`count(case when ${jobs.runner} = ${runner} then 1 end)`.mapWith(Number) })
            .from(jobs)
            .where(and(eq(jobs.agent, agent), or(eq(jobs.status, "running"), and(eq(jobs.status, "queued"), isNotNull(jobs.runner)))));
          const held = busy?.n ?? 0;
          if (held >= limit) continue;
          // The oldest, in the same statement; a job another transaction is claiming or starting is
          // passed over, not waited for.
          const next = inside.skipLocked(
            inside.db
              .select({ id: jobs.id })
              .from(jobs)
              .where(and(eq(jobs.agent, agent), eq(jobs.status, "queued"), isNull(jobs.runner)))
              .orderBy(asc(jobs.seq))
              .limit(1),
          );
          const [job] = await inside.db
            .update(jobs)
            .set({ runner })
            .where(and(eq(jobs.id, sql`(${next})`), isNull(jobs.runner)))
            .returning();
          if (!job) continue;
          await inside.notify("job", job.id);
          const later = i < waiting.length - 1;
          const roomHere = limit - (held - (busy?.mine ?? 0));
          return { job, more: (queued > 1 && held + 1 < limit) || later, waiting: queued > 1 || waiting.length > 1, roomHere };
        }
        return { job: undefined, more: false, waiting: waiting.length > 0 };
      };
      return d.inTransaction ? claimIn(d, false) : d.atomic((inside) => claimIn(inside, true));
    },
    async releaseQueued(runner, agent) {
      const released = await d.db
        .update(jobs)
        .set({ runner: null })
        .where(
          and(
            eq(jobs.runner, runner),
            eq(jobs.status, "queued"),
            // An agent's only while it has a label: a label removed again meanwhile keeps them here (its takeQueued may have run first).
            // Never a worktree job: its worktree is on this machine (worktrees do not run on runners).
            agent === undefined ? undefined : and(inArray(jobs.agent, labelledAgents(agent)), isNull(jobs.startedAt), isNull(jobs.worktree)),
          ),
        )
        .returning();
      if (!released.length) return released;
      const labelled = await d.db
        .selectDistinct({ label: agents.runnerLabel })
        .from(agents)
        .where(and(inArray(agents.name, [...new Set(released.map((r) => r.agent))]), isNotNull(agents.runnerLabel)));
      await announceQueued(labelled.map((r) => r.label).filter((label) => label !== null));
      return released;
    },
    async takeQueued(runner, agent) {
      // A runner's claim holds the job's row (PostgreSQL: FOR UPDATE) until it commits; this update then finds it claimed.
      const taken = await d.db
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
      const [row] = await d.db
        .select({ n: count() })
        .from(jobs)
        .where(and(eq(jobs.agent, agent), inArray(jobs.status, ["queued", "running"]), isNotNull(jobs.runner), ne(jobs.runner, runner)));
      return row?.n ?? 0;
    },
    announceQueued,
    async askToStop(jobId) {
      await d.notify("cancel", jobId);
    },
    async markStopped(id, at) {
      return (
        d.changes(
          await d.db
            .update(runners)
            .set({ stoppedAt: at })
            .where(and(eq(runners.id, id), isNull(runners.stoppedAt))),
        ) > 0
      );
    },
  };
}
