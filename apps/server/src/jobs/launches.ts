import path from "node:path";
import type { Job, JobOrigin } from "@corral/shared";
import type { Registry, Repos } from "../db/registry.js";
import type { JobRow } from "../db/schema.js";
import type { Unit } from "../db/unit.js";
import { badInput, ServiceError } from "../lib/errors.js";
import type { JobDeps } from "./deps.js";
import type { JobStore } from "./job-store.js";
import { toJob } from "./job-view.js";
import type { LaunchRequest } from "./launch-request.js";
import { earlierTurn, type PlannedJob, type PreparedWorktree, planLaunch, prepareWorktree } from "./launch-plan.js";
import type { Scheduler } from "./scheduler.js";
import { removeWorktree } from "../worktrees/git-worktree.js";

/** Worktrees made for launches and then not stored (refused, or not taken): nothing of theirs stays behind. */
async function removeUnused(prepared: (PreparedWorktree | undefined)[], stored: Job[] = []): Promise<void> {
  const kept = new Set(stored.map((job) => job.worktree?.path));
  for (const made of prepared) {
    // A pending one (a runner's job) has nothing on disk here to remove.
    if (made?.worktree.state === "active" && !kept.has(made.worktree.path)) await removeWorktree(made.worktree).catch(() => undefined);
  }
}

/** Releases what the plans hold once their transaction has ended, committed or not. */
function releaseAtEnd(unit: Unit, planned: PlannedJob): void {
  unit.afterCommit(planned.release);
  unit.afterRollback(planned.release);
}

/**
 * Launches for every door: each launch is checked (launch-plan.ts) and stored in one transaction,
 * then queued here or left in the registry for the runners of its agent's label.
 */
export class JobLaunches {
  constructor(
    private readonly deps: Pick<JobDeps, "config" | "registry" | "costs" | "runnerId">,
    private readonly store: JobStore,
    private readonly scheduler: Pick<Scheduler, "reserve" | "unreserve" | "enqueue">,
  ) {}

  private get registry(): Registry {
    return this.deps.registry;
  }

  /**
   * Checks and stores the job in one transaction, so nothing checked (the agent, the budget, a
   * busy workdir, the earlier turn) changes before it is stored. `within`: the caller's transaction
   * (a conversation's message stored with its job); the job is queued once that has committed.
   */
  async launch(agentName: string, request: LaunchRequest, origin: JobOrigin, client: string | null = null, within?: Unit): Promise<Job> {
    this.store.space.assertRoom();
    // Within the caller's transaction, read through it: with SQLite a read through the registry
    // itself would wait for that transaction to end, which waits for this launch.
    const prepared = await prepareWorktree(within?.tx ?? this.registry, agentName, request, this.deps.config);
    const launch = async (unit: Unit) => {
      const planned = await planLaunch(unit.tx, agentName, request, this.deps, prepared);
      releaseAtEnd(unit, planned);
      // The caller's transaction may still roll back after this launch is stored: its worktree goes then.
      if (within) unit.afterRollback(() => void removeUnused([prepared]));
      return this.storePlanned(unit, [planned], origin, client);
    };
    const stored = await (within ? launch(within) : this.store.atomically(launch)).catch(async (err: unknown) => {
      await removeUnused([prepared]);
      throw err;
    });
    await removeUnused([prepared], stored);
    return stored[0] as Job;
  }

  /**
   * One prompt to several agents, one job each, in the order given: every job is checked (agent,
   * budget, workdir, command line, room in the queue) before any is stored, so a refusal launches
   * none, and the error names the agent at fault. Each job runs in `<workdir>/<agent>` (each agent's
   * own workdir without one); with `sharedWorkdir` all run in `workdir` itself, together.
   */
  async launchMany(
    agentNames: string[],
    request: Omit<LaunchRequest, "session" | "relaunchOf">,
    origin: JobOrigin,
    client: string | null = null,
  ): Promise<Job[]> {
    agentNames.forEach((name, i) => {
      if (agentNames.indexOf(name) !== i) throw badInput(`${name} is named twice; name each agent once`, `agents.${i}`);
    });
    if (request.sharedWorkdir && request.workdir === undefined) {
      throw badInput("a shared workdir needs a workdir: name the directory the agents share", "workdir");
    }
    const base = request.workdir;
    this.store.space.assertRoom();
    const prepared: (PreparedWorktree | undefined)[] = [];
    // With worktrees (asked for, or the agent's default), each agent gets its own of the one
    // repository, on its own branch: no `<workdir>/<agent>` folder is made in it.
    const requests: LaunchRequest[] = [];
    for (const name of agentNames) {
      const inWorktree = request.worktree ?? (await this.registry.agents.get(name))?.worktree ?? false;
      requests.push({ ...request, workdir: base === undefined || request.sharedWorkdir || inWorktree ? base : path.join(base, name) });
    }
    // Each agent's step, its refusal naming the agent.
    const forEach = async <T>(step: (name: string, i: number) => Promise<T>): Promise<T[]> => {
      const done: T[] = [];
      for (const [i, name] of agentNames.entries()) {
        try {
          done.push(await step(name, i));
        } catch (err) {
          throw err instanceof ServiceError ? forAgent(err, name, i) : err;
        }
      }
      return done;
    };
    const launchAll = async (): Promise<Job[]> => {
      await forEach(async (name, i) => prepared.push(await prepareWorktree(this.registry, name, requests[i] as LaunchRequest, this.deps.config)));
      return this.store.atomically(async (unit) => {
        const planned = await forEach(async (name, i) => {
          const plan = await planLaunch(unit.tx, name, requests[i] as LaunchRequest, this.deps, prepared[i]);
          releaseAtEnd(unit, plan);
          return plan;
        });
        if (!request.sharedWorkdir) assertApart(planned);
        return this.storePlanned(unit, planned, origin, client);
      });
    };
    const stored = await launchAll().catch(async (err: unknown) => {
      await removeUnused(prepared);
      throw err;
    });
    await removeUnused(prepared, stored);
    return stored;
  }

  /**
   * Whether job `id` has a conversation a follow-up would continue now. A conversation of agents
   * (the hub) continues a worker's last job when it can and otherwise asks afresh: a job that never
   * reached a session, or a worker kind without one, has no context to lose. `tx`: the transaction
   * of the launch that would continue it.
   */
  async hasConversation(id: string, tx: Repos = this.registry): Promise<boolean> {
    const earlier = await tx.jobs.get(id);
    const agent = earlier && (await tx.agents.get(earlier.agent));
    if (!agent) return false;
    try {
      await earlierTurn(tx, agent, id);
      return true;
    } catch (err) {
      if (err instanceof ServiceError) return false;
      throw err;
    }
  }

  /**
   * Stores planned jobs and their audit entries in the unit's transaction (a failed write leaves
   * none behind); they are announced and queued once it has committed. Their room in the queue is
   * held from now, so launches stored together never overfill it.
   */
  private async storePlanned(unit: Unit, planned: PlannedJob[], origin: JobOrigin, client: string | null): Promise<Job[]> {
    // A job of an agent with a runner label waits in the registry for a runner to claim it: it
    // takes no room in this server's queue and is never started here. The server's own jobs are
    // its runner's (`local`) from the moment they are stored: the launch is their claim.
    const local = planned.filter(({ agent }) => agent.runnerLabel === null).length;
    this.scheduler.reserve(local);
    unit.afterRollback(() => this.scheduler.unreserve(local));
    const ids = planned.map((p) => p.id);
    const groupId = ids.length > 1 ? (ids[0] ?? null) : null;
    const rows: JobRow[] = [];
    for (const [i, { agent, request, earlier, workdir, model, worktree }] of planned.entries()) {
      const id = ids[i] as string;
      const inserted = await unit.tx.jobs.insert({
        id,
        agent: agent.name,
        status: "queued",
        prompt: request.prompt,
        workdir,
        model,
        conversationId: earlier ? (earlier.conversationId ?? earlier.id) : id,
        groupId,
        relaunchOf: request.relaunchOf ?? null,
        followUpOf: earlier?.id ?? null,
        runner: agent.runnerLabel === null ? this.deps.runnerId : null,
        timeoutS: request.timeoutS ?? agent.timeoutS,
        retry: request.retry ?? agent.retry,
        provider: agent.provider,
        maxCostUsd: request.maxCostUsd ?? null,
        maxTokens: request.maxTokens ?? null,
        worktree,
        origin,
        createdAt: Date.now(),
      });
      await this.store.audit(unit, "launch", inserted, { door: origin, client });
      rows.push(this.store.announce(inserted, unit));
      if (agent.runnerLabel === null) unit.afterCommit(() => this.scheduler.enqueue(inserted.agent, inserted.id, true));
    }
    // Runners with these labels hear of the jobs once they are committed and claim them at once.
    const labels = planned.flatMap(({ agent }) => (agent.runnerLabel === null ? [] : [agent.runnerLabel]));
    if (labels.length) await unit.tx.runners.announceQueued(labels);
    return rows.map(toJob);
  }
}

/** Jobs launched together each work in a workdir of their own, unless they share it. */
function assertApart(planned: PlannedJob[]): void {
  const seen = new Map<string, string>();
  for (const { agent, workdir } of planned) {
    const other = seen.get(workdir);
    if (other !== undefined) {
      throw new ServiceError(
        `${other} and ${agent.name} both work in ${workdir}; give a workdir (each agent gets its own folder in it) or share it`,
        409,
        "workdir",
        undefined,
        "conflict",
        { agent: agent.name },
      );
    }
    seen.set(workdir, agent.name);
  }
}

/**
 * An agent's refusal within a launch to several: the message starts with the agent, a field about
 * the agent names its place in `agents`, and the details carry its name.
 */
function forAgent(err: ServiceError, agent: string, index: number): ServiceError {
  const field = err.field === "agent" ? `agents.${index}` : err.field;
  return new ServiceError(`${agent}: ${err.message}`, err.status, field, err.issues, err.code, { ...err.details, agent });
}
