import { randomBytes } from "node:crypto";
import path from "node:path";
import { EventEmitter } from "node:events";
import {
  isFinalStatus,
  type AuditAction,
  type Job,
  type JobAttempt,
  type JobGroup,
  type JobInput,
  type JobList,
  type JobListQuery,
  type JobOrigin,
  type JobStatus,
  type JobThread,
  type OutputPage,
  type ReadablePage,
  type OutputStream,
  LOCAL_RUNNER,
} from "@corral/shared";
import { effectiveModel } from "../agents/model.js";
import { agentKindModule } from "../agents/registry.js";
import type { InProcessAdapter } from "../agents/types.js";
import type { AppConfig } from "../config.js";
import type { JobCostPolicy } from "../costs/service.js";
import type { Registry, Repos } from "../db/registry.js";
import type { JobPatch } from "../db/registry.js";
import { inUnit, type Unit } from "../db/unit.js";
import { registryUnreachable } from "../db/registry-error.js";
import type { AgentRow, JobRow } from "../db/schema.js";
import { SpaceReserve } from "../lib/disk-space.js";
import { badInput, notFound, ServiceError } from "../lib/errors.js";
import type { Actor, AuditService } from "../audit/service.js";
import { assertLaunchFits } from "./command-line.js";
import { toJob, toJobAttempt } from "./job-view.js";
import { type ByteChunk, CursorError, type OutputRecords, readOutputBytes, tailText } from "./output-log.js";
import { lastReadableLine, readReadable } from "./readable-output.js";
import { JobRunner, MAX_TIMER_MS, type RunStore } from "./runner.js";
import { RunnerOutputCopy } from "./runner-output-copy.js";
import { Scheduler } from "./scheduler.js";
import { jobDataPaths } from "./worker-process.js";
import { resolveWorkdir } from "./workdir.js";

export interface OutputEvent {
  jobId: string;
  stream: OutputStream;
  /** UTF-8, whole characters: sent on as it is. */
  data: Buffer;
  /** Where the next read starts after this chunk. */
  cursor: number;
}

export interface JobServiceEvents {
  /** A job was created or changed (status, usage); the row is already stored. */
  job: [Job];
  /** New output, already in the job's log. */
  output: [OutputEvent];
}

export interface JobServiceDeps {
  config: AppConfig;
  /** Where jobs, agents and audit entries are stored; a change and its audit entry share a transaction. */
  registry: Registry;
  /** In-process adapters by agent kind (the Ollama loop). */
  inProcessAdapters?: Partial<Record<string, InProcessAdapter>>;
  hooks?: JobHooks;
  /** Records who launched and cancelled what. */
  audit: Pick<AuditService, "store" | "announce">;
  /** Budgets, prices and per-job limits. */
  costs?: JobCostPolicy;
  /**
   * The runner (runners.id) this service runs jobs for: it starts only jobs that runner holds.
   * The server is the runner `local` (LOCAL_RUNNER): it holds its agents' jobs from their launch,
   * where a `corral runner` claims its own from the registry.
   */
  runnerId: string;
}

/**
 * Work tied to a worker's life (the file watcher): before it starts (the worker waits for it), and
 * after it ended but before the final status is stored (the status waits for it).
 */
export interface JobHooks {
  starting(row: JobRow): Promise<void>;
  /** The job's worker was picked up again after a restart; nothing waits for this. */
  resumed(row: JobRow): void;
  /** `ran` false: the worker never started, so the workdir is not compared (nothing of the job's changed it). */
  ended(row: JobRow, ran?: boolean): Promise<void>;
}

/** A launch that passed every check, ready to be stored. */
interface PlannedJob {
  agent: AgentRow;
  input: JobInput;
  earlier: JobRow | undefined;
  workdir: string;
  model: string | null;
}

const newJobId = () => randomBytes(8).toString("hex").slice(0, 12);

/** A thread lists its conversation's newest jobs, at most. */
export const THREAD_LIMIT = 200;

/**
 * How long a cancel waits for a runner to report its worker gone, beyond the kill grace period:
 * the runner hears at once (NOTIFY) or at its next heartbeat (2 s).
 */
const REMOTE_STOP_MS = 5000;

/** How soon an agent's change is read again when the registry could not be reached. */
const AGENT_CHANGE_RETRY_MS = 1000;

/**
 * Jobs for every door (MCP, REST, the panel): launch, look up, read, wait for and cancel. The
 * scheduler decides when each may start; the runner drives it from there to its end.
 */
export class JobService extends EventEmitter<JobServiceEvents> {
  private scheduler: Scheduler;
  private runner: JobRunner;
  private runnerOutput: RunnerOutputCopy;
  /** Room kept in the data dir so that, with its disk full, jobs' ends and cancels are still stored. */
  private space: SpaceReserve;

  constructor(private readonly deps: JobServiceDeps) {
    super();
    this.space = new SpaceReserve(deps.config.dataDir);
    this.setMaxListeners(0);
    this.scheduler = new Scheduler(
      (agent) => this.limitHere(agent),
      (agent, jobId) => void this.runner.start(agent, jobId),
      deps.config.queueLimit,
    );
    const store: RunStore = {
      update: (id, patch, unit) => this.update(id, patch, unit),
      finish: (id, patch, unit) => this.finish(id, patch, unit),
      output: (event) => this.emit("output", event),
      atomically: (fn) => this.atomically(fn),
    };
    this.runner = new JobRunner(deps, store, this.scheduler);
    this.runnerOutput = new RunnerOutputCopy(deps.registry.jobOutput, deps.config.dataDir, (event) => this.emit("output", event));
  }

  private get config(): AppConfig {
    return this.deps.config;
  }

  /** Set once recovery has queued local's jobs: the lease sweep takes strays only after it (never queued twice). */
  private recovered = false;

  private get registry(): Registry {
    return this.deps.registry;
  }

  /**
   * How many of the agent's jobs this process may run at once: its maxConcurrent less the jobs
   * other runners hold, so the limit holds across the server and every runner (a runner's claim
   * counts the others' the same way).
   */
  private async limitHere(name: string): Promise<number> {
    const agent = await this.registry.agents.get(name);
    if (!agent) return 1;
    return agent.maxConcurrent - (await this.registry.runners.heldElsewhere(name, this.deps.runnerId));
  }

  /**
   * Checks and stores the job in one transaction, so nothing checked (the agent, the budget, a
   * busy workdir, the earlier turn) changes before it is stored. `within`: the caller's transaction
   * (a conversation's message stored with its job); the job is queued once that has committed.
   */
  async launch(agentName: string, input: JobInput, origin: JobOrigin, client: string | null = null, within?: Unit): Promise<Job> {
    this.space.assertRoom();
    const launch = async (unit: Unit) => this.store(unit, [await this.plan(unit.tx, agentName, input)], origin, client);
    const [job] = within ? await launch(within) : await this.atomically(launch);
    return job as Job;
  }

  /**
   * One prompt to several agents, one job each, in the order given: every job is checked (agent,
   * budget, workdir, command line, room in the queue) before any is stored, so a refusal launches
   * none, and the error names the agent at fault. Each job runs in `<workdir>/<agent>` (each agent's
   * own workdir without one); with `shared_workdir` all run in `workdir` itself, together.
   */
  async launchMany(agentNames: string[], input: Omit<JobInput, "session">, origin: JobOrigin, client: string | null = null): Promise<Job[]> {
    agentNames.forEach((name, i) => {
      if (agentNames.indexOf(name) !== i) throw badInput(`${name} is named twice; name each agent once`, `agents.${i}`);
    });
    if (input.shared_workdir && input.workdir === undefined) {
      throw badInput("a shared workdir needs a workdir: name the directory the agents share", "workdir");
    }
    const base = input.workdir;
    this.space.assertRoom();
    return this.atomically(async (unit) => {
      const planned: PlannedJob[] = [];
      for (const [i, name] of agentNames.entries()) {
        const workdir = base === undefined || input.shared_workdir ? base : path.join(base, name);
        try {
          planned.push(await this.plan(unit.tx, name, { ...input, workdir }));
        } catch (err) {
          throw err instanceof ServiceError ? forAgent(err, name, i) : err;
        }
      }
      if (!input.shared_workdir) {
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
      return this.store(unit, planned, origin, client);
    });
  }

  /** Everything a launch checks, read in the launch's transaction: what `store` needs to insert the job. */
  private async plan(tx: Repos, agentName: string, input: JobInput): Promise<PlannedJob> {
    const agent = await tx.agents.get(agentName);
    if (!agent) throw notFound(`agent ${agentName} does not exist; list agents with corral_agents or GET /api/agents`, "agent");
    if (!agent.enabled)
      throw new ServiceError(`agent ${agentName} is disabled; enable it to run jobs`, 409, "agent", undefined, "agent_disabled", {
        agent: agentName,
      });
    const earlier = input.session === undefined ? undefined : await this.earlierTurn(tx, agent, input.session);
    await this.deps.costs?.admit(agent, input.max_cost_usd ?? null, tx);
    // A follow-up runs where its conversation did (CLIs keep their sessions per project directory), with its model.
    const workdir = resolveWorkdir(input.workdir ?? earlier?.workdir ?? agent.workdir, this.config);
    const model = input.model ?? earlier?.model ?? effectiveModel(agent, this.config);
    if (earlier) assertSessionReachable(agent, earlier, workdir);
    assertLaunchFits(agent, { prompt: input.prompt, workdir, model }, this.config);
    const busy = input.shared_workdir ? undefined : await tx.jobs.activeInWorkdir(workdir);
    if (busy) {
      throw new ServiceError(
        `${workdir} is in use by job ${busy.id} (${busy.agent}, ${busy.status}); use another workdir, wait for that job (corral_wait), or pass shared_workdir: true to let both write there`,
        409,
        "workdir",
        undefined,
        "workdir_busy",
        { jobId: busy.id },
      );
    }
    return { agent, input, earlier, workdir, model };
  }

  /**
   * Stores planned jobs and their audit entries in the unit's transaction (a failed write leaves
   * none behind); they are announced and queued once it has committed. Their room in the queue is
   * held from now, so launches stored together never overfill it.
   */
  private async store(unit: Unit, planned: PlannedJob[], origin: JobOrigin, client: string | null): Promise<Job[]> {
    // A job of an agent with a runner label waits in the registry for a runner to claim it: it
    // takes no room in this server's queue and is never started here. The server's own jobs are
    // its runner's (`local`) from the moment they are stored: the launch is their claim.
    const local = planned.filter(({ agent }) => agent.runnerLabel === null).length;
    this.scheduler.reserve(local);
    unit.afterRollback(() => this.scheduler.unreserve(local));
    const ids = planned.map(() => newJobId());
    const groupId = ids.length > 1 ? (ids[0] ?? null) : null;
    const rows: JobRow[] = [];
    for (const [i, { agent, input, earlier, workdir, model }] of planned.entries()) {
      const id = ids[i] as string;
      const inserted = await unit.tx.jobs.insert({
        id,
        agent: agent.name,
        status: "queued",
        prompt: input.prompt,
        workdir,
        model,
        conversationId: earlier ? (earlier.conversationId ?? earlier.id) : id,
        groupId,
        followUpOf: earlier?.id ?? null,
        runner: agent.runnerLabel === null ? this.deps.runnerId : null,
        timeoutS: input.timeout_s ?? agent.timeoutS,
        retry: input.retry ?? agent.retry,
        provider: agent.provider,
        maxCostUsd: input.max_cost_usd ?? null,
        maxTokens: input.max_tokens ?? null,
        origin,
        createdAt: Date.now(),
      });
      await this.audit(unit, "launch", inserted, { door: origin, client });
      rows.push(this.announce(inserted, unit));
      if (agent.runnerLabel === null) unit.afterCommit(() => this.scheduler.enqueue(inserted.agent, inserted.id, true));
    }
    // Runners with these labels hear of the jobs once they are committed and claim them at once.
    const labels = planned.flatMap(({ agent }) => (agent.runnerLabel === null ? [] : [agent.runnerLabel]));
    if (labels.length) await unit.tx.runners.announceQueued(labels);
    return rows.map(toJob);
  }

  /**
   * The earlier job a follow-up continues (`session`), refused with the reason unless its
   * conversation can really be continued: a follow-up never quietly starts afresh. A job still
   * queued or running has no finished turn to continue yet, so it is refused too (wait for it).
   */
  private async earlierTurn(tx: Repos, agent: AgentRow, session: string): Promise<JobRow> {
    const earlier = await tx.jobs.get(session);
    if (!earlier) throw notFound(`job ${session} not found; pass the id of an earlier ${agent.name} job as session`, "session");
    if (earlier.agent !== agent.name) {
      throw badInput(
        `job ${session} ran on ${earlier.agent}, not ${agent.name}; a follow-up continues a conversation with the same agent`,
        "session",
      );
    }
    const kind = agentKindModule(agent.kind);
    if (!kind?.resumes) {
      throw badInput(
        `${agent.name} cannot continue a conversation (Corral has no way to resume a ${agent.kind} worker's session); launch without session to start a new one`,
        "session",
      );
    }
    const conflict = (why: string) => new ServiceError(`job ${session} ${why}`, 409, "session", undefined, "conflict", { jobId: session });
    if (!isFinalStatus(earlier.status)) {
      throw conflict(`is still ${earlier.status}; wait for it to end (corral_wait or ${agent.name}_done), then follow it up`);
    }
    const never = earlier.startedAt === null ? `it never started (${earlier.status})` : null;
    // A worker that names its session (a CLI, a running OpenCode server) is resumed there; an
    // in-process loop without one (Ollama) sends the history kept in the registry.
    if (earlier.workerSession !== null) return earlier;
    if ("cli" in kind) {
      throw conflict(`has no worker session to resume: ${never ?? `its worker reported no session id (${earlier.status})`}`);
    }
    if (!(await tx.jobMessages.began(earlier.id))) {
      throw conflict(`has no conversation to continue: ${never ?? `its worker never reached the model (${earlier.status})`}`);
    }
    return earlier;
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
      await this.earlierTurn(tx, agent, id);
      return true;
    } catch (err) {
      if (err instanceof ServiceError) return false;
      throw err;
    }
  }

  /** The jobs of a job's conversation, oldest first: the newest THREAD_LIMIT of them. */
  async thread(id: string): Promise<JobThread> {
    const job = await this.get(id);
    const rows = await this.registry.jobs.thread(job.conversationId, THREAD_LIMIT);
    // A job stored before conversations were recorded has none: it is its own.
    return { conversationId: job.conversationId, jobs: rows.length ? rows.map(toJob) : [job] };
  }

  /** The jobs launched together with this one (itself alone when it was launched alone), in launch order. */
  async group(id: string): Promise<JobGroup> {
    const job = await this.get(id);
    return { jobs: job.groupId ? (await this.registry.jobs.group(job.groupId)).map(toJob) : [job] };
  }

  async find(id: string): Promise<Job | undefined> {
    const row = await this.registry.jobs.get(id);
    return row && toJob(row);
  }

  async get(id: string): Promise<Job> {
    const row = await this.registry.jobs.get(id);
    if (!row) throw notFound(`job ${id} not found`, "job_id");
    return toJob(row);
  }

  async list(query: JobListQuery): Promise<JobList> {
    const { rows, ...counted } = await this.registry.jobs.list(query);
    return { jobs: rows.map(toJob), ...counted };
  }

  /** Resolves once the job has ended (a queued job ends at once). */
  async cancel(id: string, actor?: Actor): Promise<Job> {
    // A job that never started ends here, in the transaction of its audit entry; a running one
    // ends once its worker is gone, so only the request is stored with the entry. The first
    // request is the one the job keeps (who and when, for its timeline); a restart honours it.
    // Read in the same transaction: a start that stores the job running cannot come in between.
    const ended = await this.atomically(async (unit) => {
      const row = await unit.tx.jobs.get(id);
      if (!row) throw notFound(`job ${id} not found`, "job_id");
      if (isFinalStatus(row.status)) return true;
      if (actor) await this.audit(unit, "cancel", row, actor);
      if (row.cancelRequestedAt === null) {
        await this.update(id, { cancelRequestedAt: Date.now(), cancelledBy: actor?.door ?? "server", cancelClient: actor?.client ?? null }, unit);
      }
      if (await this.runner.cancelRetry(row, unit)) return true;
      if (row.status !== "queued") {
        // Another process's worker (a runner's): it is told, and stops it when this commits.
        if (!this.runsHere(row)) {
          await unit.tx.runners.askToStop(id);
          return "elsewhere";
        }
        return false;
      }
      await this.finish(id, { status: "cancelled", error: "cancelled before it started" }, unit);
      unit.afterCommit(() => this.scheduler.remove(row.agent, id));
      return true;
    });
    if (ended === "elsewhere") await this.waitFor([id], this.config.killGraceMs + REMOTE_STOP_MS);
    else if (!ended) await this.runner.stop(id, "cancelled", "cancelled");
    return this.get(id);
  }

  /** Whether this process runs the job: the job is its runner's (the server's are `local`'s). */
  private runsHere(row: JobRow): boolean {
    return row.runner === this.deps.runnerId;
  }

  async readOutput(id: string, cursor: number, limit: number): Promise<OutputPage> {
    const job = await this.get(id);
    await this.runnerOutputCaughtUp(job);
    const page = this.outputFrom(id, cursor, limit);
    const chunks = page.chunks.map(({ stream, data }) => ({ stream, text: data.toString("utf8") }));
    return { chunks, cursor: page.cursor, complete: isFinalStatus(job.status) && page.cursor >= page.size };
  }

  /**
   * The one read of a job's output log that every door goes through (REST and MCP by pages, the
   * WebSocket by chunks it can resume after): whole records from `cursor`, about `limit` bytes of
   * text, each chunk as UTF-8 with the cursor after it. A cursor this server never handed out answers 400.
   */
  outputFrom(id: string, cursor: number, limit: number): OutputRecords<ByteChunk> {
    return atCursor(() => readOutputBytes(this.logFile(id), cursor, limit));
  }

  /** The output as its agent kind reads it (see readReadable), for the panel's Readable view. */
  async readReadable(id: string, cursor: number, limit: number): Promise<ReadablePage> {
    const job = await this.get(id);
    await this.runnerOutputCaughtUp(job);
    const kind = (await this.registry.agents.get(job.agent))?.kind;
    return atCursor(() => readReadable(this.logFile(id), kind ? agentKindModule(kind) : undefined, cursor, limit, isFinalStatus(job.status)));
  }

  /**
   * A runner's job: what it stored that this server has not copied yet (stored while the server
   * was down, or not yet heard of) is copied before the log is read. A job run here has nothing to copy.
   */
  private async runnerOutputCaughtUp(job: Job): Promise<void> {
    if (job.runner !== null && job.runner !== this.deps.runnerId) await this.runnerOutput.copy(job.id);
  }

  /** The latest line the Readable view shows (see lastReadableLine), for the panel's Running-now cards. */
  async readableLine(job: Job): Promise<string> {
    const kind = (await this.registry.agents.get(job.agent))?.kind;
    return lastReadableLine(this.logFile(job.id), kind ? agentKindModule(kind) : undefined, isFinalStatus(job.status));
  }

  /** The output's end, of a job just read (every `_done` reads its tail). */
  outputTail(job: Job, maxChars: number, streams?: OutputStream[]): string {
    return tailText(this.logFile(job.id), maxChars, streams);
  }

  private logFile(id: string): string {
    return jobDataPaths(this.config.dataDir, id).log;
  }

  /** Resolves with the jobs once all have ended, or with their current state at the timeout. */
  async waitFor(ids: string[], timeoutMs: number, signal?: AbortSignal): Promise<Job[]> {
    const current = () => Promise.all(ids.map((id) => this.get(id)));
    // Listening before the first read: a job that ends while it is read is still heard of.
    const ended = new Set<string>();
    const allEnded = () => ids.every((id) => ended.has(id));
    let wake = () => {};
    const onJob = (job: Job) => {
      if (!isFinalStatus(job.status) || !ids.includes(job.id)) return;
      ended.add(job.id);
      if (allEnded()) wake();
    };
    this.on("job", onJob);
    const onAbort = () => wake();
    let timer: NodeJS.Timeout | undefined;
    try {
      const jobs = await current();
      for (const job of jobs) if (isFinalStatus(job.status)) ended.add(job.id);
      if (allEnded()) return jobs;
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, Math.min(timeoutMs, MAX_TIMER_MS));
        signal?.addEventListener("abort", onAbort, { once: true });
        if (signal?.aborted || allEnded()) resolve();
      });
      return await current();
    } finally {
      clearTimeout(timer);
      this.off("job", onJob);
      signal?.removeEventListener("abort", onAbort);
    }
  }

  async attempts(id: string): Promise<JobAttempt[]> {
    await this.get(id);
    return (await this.registry.jobs.attempts(id)).map(toJobAttempt);
  }

  queuedCount(): number {
    return this.scheduler.queuedCount();
  }

  /**
   * A runner's job, claimed from the registry (runners.claim): it starts here as a launch's would,
   * through this runner's queue for its agent.
   */
  startClaimed(row: JobRow): void {
    if (!this.runsHere(row)) throw new Error(`job ${row.id} is not claimed by this runner`);
    this.scheduler.enqueue(row.agent, row.id);
  }

  /** Jobs this process runs now (started and not yet ended). */
  activeIds(): string[] {
    return this.runner.activeIds();
  }

  /**
   * What a runner NOTIFYs (JOB_CHANNEL): `<jobId>` after a change to the job, `<jobId>:<seq>` after
   * output chunks up to seq. The job's stored state is announced as this process's own changes
   * are (waits, the WebSocket and MCP tasks hear of it); output is copied into this server's log
   * of the job first, so a job told ended has all its output there. Called in the order heard.
   * Returns whether the job is one for runners (see forRunners): a NOTIFY about this server's own is ignored.
   */
  async heardFromRunner(payload: string): Promise<boolean> {
    const [id = "", seq] = payload.split(":");
    if (!id) return false;
    const row = await this.registry.jobs.get(id);
    if (!row) return false;
    // Any login may NOTIFY, so a payload is only a hint: output is copied only for a job a runner
    // holds (the registry lets a runner store output only for its own), never into a log this
    // server writes itself.
    if (row.runner === this.deps.runnerId) return false;
    if (row.runner !== null) await this.runnerOutput.copy(id);
    if (seq !== undefined) return true;
    if (isFinalStatus(row.status)) {
      this.runnerOutput.forget(id);
      // A slot of its agent is free across machines: a job waiting here may start.
      this.scheduler.pump(row.agent);
    }
    this.announce(row);
    return true;
  }

  /** Whether job `id` is one for runners (held by one, or waiting for one), not this server's own: what a NOTIFY about it may tell. */
  async forRunners(id: string): Promise<boolean> {
    const row = await this.registry.jobs.get(id);
    return !!row && row.runner !== this.deps.runnerId;
  }

  /**
   * Runners silent past their lease (no heartbeat for `leaseMs`): each running job of theirs ends
   * `lost` (its runner's later writes are refused, see jobs.updateClaimed), so it is never run
   * twice at once; jobs they claimed but never started are given back for another runner.
   * Read and written in one transaction. Returns how many jobs were lost.
   */
  async loseJobsOfSilentRunners(leaseMs: number, now = Date.now()): Promise<number> {
    return this.atomically(async (unit) => {
      // The server's own runner is never silent while the server runs this; its jobs are followed again at its start.
      const silent = (await unit.tx.runners.list()).filter((r) => r.id !== LOCAL_RUNNER && r.stoppedAt === null && r.heartbeatAt < now - leaseMs);
      const running = silent.length ? await unit.tx.jobs.withStatus(["running"]) : [];
      let lost = 0;
      for (const runner of silent) {
        await unit.tx.runners.releaseQueued(runner.id);
        for (const row of running.filter((j) => j.runner === runner.id)) {
          const error = `runner ${runner.name} (${runner.id}) fell silent: no heartbeat for ${Math.round((now - runner.heartbeatAt) / 1000)} s, past its lease of ${Math.round(leaseMs / 1000)} s; its worker may still run there, but nothing it does is recorded any more`;
          await unit.tx.jobs.endAttempt(row.id, row.attempt, { status: "lost", error, endedAt: now });
          await this.finish(row.id, { status: "lost", error }, unit);
          unit.afterCommit(() => this.scheduler.pump(row.agent));
          lost++;
        }
      }
      // Jobs given back (here, or by a runner that stopped) of agents whose label was removed while a
      // runner held them (for a retry): no runner claims them, so they are local's, as a label removed
      // gives local the waiting ones. After recovery, which takes them at start.
      const left = this.deps.runnerId === LOCAL_RUNNER && this.recovered ? await unit.tx.runners.takeQueued(LOCAL_RUNNER) : [];
      for (const row of left) {
        this.announce(row, unit);
        unit.afterCommit(() => {
          if (!this.scheduler.holds(row.agent, row.id)) this.scheduler.enqueue(row.agent, row.id);
        });
      }
      return lost;
    });
  }

  /**
   * An agent changed: start what its limit now allows. Its waiting jobs follow its runner label:
   * a label removed, the server takes those that waited for a runner; a label given, the server
   * gives those waiting here to the runners (one that starts meanwhile is given back by
   * admission, see JobRunner.admit).
   */
  agentChanged(name: string): void {
    this.scheduler.pump(name);
    this.followRunnerLabel(name).catch((err: unknown) => {
      // Read again once the registry is back; they are queued at the next start otherwise.
      if (registryUnreachable(err)) setTimeout(() => this.agentChanged(name), AGENT_CHANGE_RETRY_MS).unref();
    });
  }

  /**
   * Starts what every agent's limit allows now. A runner calls it when the server says its label's
   * queue changed (QUEUE_CHANNEL names the label, not the agent: a limit raised on the panel may
   * let a job it claimed and still holds start) and at each claim poll, for a notification missed.
   */
  pumpQueues(): void {
    this.scheduler.pumpAll();
  }

  private async followRunnerLabel(name: string): Promise<void> {
    if (this.deps.runnerId !== LOCAL_RUNNER) return;
    const agent = await this.registry.agents.get(name);
    if (!agent) return;
    if (agent.runnerLabel === null) {
      for (const row of await this.registry.runners.takeQueued(LOCAL_RUNNER, name)) {
        this.announce(row);
        if (!this.scheduler.holds(name, row.id)) this.scheduler.enqueue(name, row.id);
      }
      return;
    }
    // PostgreSQL tells the runners with its label (releaseQueued); one starting here meanwhile is refused by admission.
    for (const row of await this.registry.runners.releaseQueued(LOCAL_RUNNER, name)) {
      this.scheduler.remove(name, row.id);
      this.announce(row);
    }
  }

  /**
   * At boot: queued jobs wait again in order; running ones are picked up where they are. A job
   * that cannot be recovered ends `lost` with the reason; it never keeps the server from starting.
   */
  async recover(): Promise<void> {
    // Queued jobs no runner holds of agents without a label (one removed while the server was down) are local's.
    await this.registry.runners.takeQueued(this.deps.runnerId);
    for (const found of await this.registry.jobs.withStatus(["queued", "running"])) {
      // Runners claim only queued jobs: a running one no runner holds was written by an older version or by hand, and is the server's.
      const row = found.status === "running" && found.runner === null ? await this.update(found.id, { runner: this.deps.runnerId }) : found;
      // A runner's job is its runner's to follow, and one waiting for a runner is left to them.
      // (A job of an agent given a runner label while the server was down is given to them as it is admitted.)
      if (!this.runsHere(row)) continue;
      try {
        if (row.status === "queued") this.scheduler.enqueue(row.agent, row.id);
        else await this.runner.reattach(row);
      } catch (err) {
        await this.runner.lose(row, `the server could not recover this job at start: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    // Once the start's own writes are done (a start on a full disk had the reserve for them), and
    // before any output is copied: what there is room for is set aside again.
    this.space.hold();
    this.recovered = true;
  }

  /**
   * Cancels every queued and running job this process runs (the server stops and was asked to
   * take its workers along). Runners' jobs, and jobs waiting for a runner, are theirs: left alone.
   */
  async cancelAll(): Promise<void> {
    const open = await this.registry.jobs.withStatus(["queued", "running"]);
    await Promise.all(open.filter((row) => this.runsHere(row)).map((row) => this.cancel(row.id)));
  }

  /** Stops following workers and leaves them running; the next start picks them up. */
  shutdown(): void {
    this.scheduler.close();
    this.runner.shutdown();
  }

  /**
   * Runs `fn` in one transaction. What it announces (job changes, audit entries) is told once the
   * transaction has committed, and never if it rolled back: nothing is announced that is not stored.
   */
  private atomically<T>(fn: (unit: Unit) => Promise<T>): Promise<T> {
    return this.space.write(() => inUnit(this.registry, fn));
  }

  private async audit(unit: Unit, action: AuditAction, row: JobRow, actor: Actor): Promise<void> {
    const entry = await this.deps.audit.store(unit.tx, action, row, actor);
    unit.afterCommit(() => this.deps.audit.announce(entry));
  }

  /** Tells of a stored row: at once, or once `unit` has committed when it was written there. */
  private announce(row: JobRow, unit?: Unit): JobRow {
    const job = toJob(row);
    if (unit) unit.afterCommit(() => this.emit("job", job));
    else this.emit("job", job);
    return row;
  }

  private async update(id: string, patch: JobPatch, unit?: Unit): Promise<JobRow> {
    // In a unit, a full disk is the unit's to retry (see atomically).
    const row = await (unit ? unit.tx.jobs.update(id, patch) : this.space.write(() => this.registry.jobs.update(id, patch)));
    if (!row) throw new Error(`job ${id} vanished from the registry`);
    return this.announce(row, unit);
  }

  private finish(id: string, patch: JobPatch & { status: JobStatus }, unit?: Unit): Promise<JobRow> {
    return this.update(id, { endedAt: Date.now(), ...patch }, unit);
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

/** Runs a read from a caller's cursor; a cursor the log does not have is the caller's error. */
function atCursor<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof CursorError) throw new ServiceError(err.message, 400, "cursor");
    throw err;
  }
}

/**
 * A CLI that keeps its sessions per working directory finds the earlier turn's session only where
 * that turn ran; elsewhere it fails (Claude Code, Gemini CLI) or waits until the job's timeout
 * (OpenCode), so another workdir is refused before anything runs.
 */
function assertSessionReachable(agent: AgentRow, earlier: JobRow, workdir: string): void {
  const kind = agentKindModule(agent.kind);
  if (!kind || !("cli" in kind) || kind.cli.resumesAnywhere || workdir === earlier.workdir) return;
  throw badInput(
    `${agent.kind} keeps job ${earlier.id}'s session in ${earlier.workdir} and finds it only there; leave workdir out to follow up in that directory`,
    "workdir",
  );
}
