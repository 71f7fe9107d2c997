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
import { earlierTurn, type PlannedJob, planLaunch } from "./launch-plan.js";
import type { Scheduler } from "./scheduler.js";
import { removeWorktree } from "../worktrees/git-worktree.js";

/** Worktrees made for launches that were then not stored: nothing of theirs stays behind. */
async function removeNewWorktrees(planned: PlannedJob[]): Promise<void> {
  for (const { worktree, earlier } of planned) if (worktree && !earlier) await removeWorktree(worktree).catch(() => undefined);
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
    const made: PlannedJob[] = [];
    const launch = async (unit: Unit) => {
      const planned = await planLaunch(unit.tx, agentName, request, this.deps);
      made.push(planned);
      return this.storePlanned(unit, [planned], origin, client);
    };
    const [job] = await (within ? launch(within) : this.store.atomically(launch)).catch(async (err: unknown) => {
      await removeNewWorktrees(made);
      throw err;
    });
    return job as Job;
  }

  /**
   * One prompt to several agents, one job each, in the order given: every job is checked (agent,
   * budget, workdir, command line, room in the queue) before any is stored, so a refusal launches
   * none, and the error names the agent at fault. Each job runs in `<workdir>/<agent>` (each agent's
   * own workdir without one); with `sharedWorkdir` all run in `workdir` itself, together.
   */
  async launchMany(agentNames: string[], request: Omit<LaunchRequest, "session">, origin: JobOrigin, client: string | null = null): Promise<Job[]> {
    agentNames.forEach((name, i) => {
      if (agentNames.indexOf(name) !== i) throw badInput(`${name} is named twice; name each agent once`, `agents.${i}`);
    });
    if (request.sharedWorkdir && request.workdir === undefined) {
      throw badInput("a shared workdir needs a workdir: name the directory the agents share", "workdir");
    }
    const base = request.workdir;
    this.store.space.assertRoom();
    const planned: PlannedJob[] = [];
    return this.store
      .atomically(async (unit) => {
        for (const [i, name] of agentNames.entries()) {
          // With worktrees, each agent gets its own of the one repository, on its own branch.
          const workdir = base === undefined || request.sharedWorkdir || request.worktree ? base : path.join(base, name);
          try {
            planned.push(await planLaunch(unit.tx, name, { ...request, workdir }, this.deps));
          } catch (err) {
            throw err instanceof ServiceError ? forAgent(err, name, i) : err;
          }
        }
        if (!request.sharedWorkdir) {
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
        return this.storePlanned(unit, planned, origin, client);
      })
      .catch(async (err: unknown) => {
        await removeNewWorktrees(planned);
        throw err;
      });
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

/**
 * An agent's refusal within a launch to several: the message starts with the agent, a field about
 * the agent names its place in `agents`, and the details carry its name.
 */
function forAgent(err: ServiceError, agent: string, index: number): ServiceError {
  const field = err.field === "agent" ? `agents.${index}` : err.field;
  return new ServiceError(`${agent}: ${err.message}`, err.status, field, err.issues, err.code, { ...err.details, agent });
}
