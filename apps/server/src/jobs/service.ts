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
} from "@corral/shared";
import { effectiveModel } from "../agents/model.js";
import { agentKindModule } from "../agents/registry.js";
import type { ConversationStore, InProcessAdapter } from "../agents/types.js";
import type { AppConfig } from "../config.js";
import type { JobCostPolicy } from "../costs/service.js";
import type { Transact } from "../db/client.js";
import type { AgentsRepo } from "../db/repos/agents.js";
import type { JobPatch, JobsRepo } from "../db/repos/jobs.js";
import type { AgentRow, JobRow } from "../db/schema.js";
import { badInput, notFound, ServiceError } from "../lib/errors.js";
import type { Actor, AuditService } from "../audit/service.js";
import { assertLaunchFits } from "./command-line.js";
import { toJob } from "./job-view.js";
import { type ByteChunk, CursorError, type OutputRecords, readOutputBytes, tailText } from "./output-log.js";
import { lastReadableLine, readReadable } from "./readable-output.js";
import { JobRunner, MAX_TIMER_MS, type RunStore } from "./runner.js";
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
  jobs: JobsRepo;
  agents: AgentsRepo;
  /** In-process adapters by agent kind (the Ollama loop). */
  inProcessAdapters?: Partial<Record<string, InProcessAdapter>>;
  /** Where in-process workers keep their conversations: a follow-up needs one to continue. */
  conversations?: Pick<ConversationStore, "began">;
  hooks?: JobHooks;
  /** Records who launched and cancelled what. */
  audit: Pick<AuditService, "store" | "announce">;
  /** A transaction over the registry, for a change and its audit entry. */
  transact: Transact;
  /** Budgets, prices and per-job limits. */
  costs?: JobCostPolicy;
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
 * Jobs for every door (MCP, REST, the panel): launch, look up, read, wait for and cancel. The
 * scheduler decides when each may start; the runner drives it from there to its end.
 */
export class JobService extends EventEmitter<JobServiceEvents> {
  private scheduler: Scheduler;
  private runner: JobRunner;
  /** Announcements held back until the transaction in progress has committed; null outside one. */
  private afterCommit: (() => void)[] | null = null;

  constructor(private readonly deps: JobServiceDeps) {
    super();
    this.setMaxListeners(0);
    this.scheduler = new Scheduler(
      (agent) => this.deps.agents.get(agent)?.maxConcurrent ?? 1,
      (jobId) => void this.runner.start(jobId),
      deps.config.queueLimit,
    );
    const store: RunStore = {
      update: (id, patch) => this.update(id, patch),
      finish: (id, patch) => this.finish(id, patch),
      output: (event) => this.emit("output", event),
      atomically: (fn) => this.atomically(fn),
    };
    this.runner = new JobRunner(deps, store, this.scheduler);
  }

  private get config(): AppConfig {
    return this.deps.config;
  }

  launch(agentName: string, input: JobInput, origin: JobOrigin, client: string | null = null): Job {
    const planned = this.plan(agentName, input);
    this.scheduler.assertRoom();
    const [job] = this.store([planned], origin, client);
    return job as Job;
  }

  /**
   * One prompt to several agents, one job each, in the order given: every job is checked (agent,
   * budget, workdir, command line, room in the queue) before any is stored, so a refusal launches
   * none, and the error names the agent at fault. Each job runs in `<workdir>/<agent>` (each agent's
   * own workdir without one); with `shared_workdir` all run in `workdir` itself, together.
   */
  launchMany(agentNames: string[], input: Omit<JobInput, "session">, origin: JobOrigin, client: string | null = null): Job[] {
    agentNames.forEach((name, i) => {
      if (agentNames.indexOf(name) !== i) throw badInput(`${name} is named twice; name each agent once`, `agents.${i}`);
    });
    if (input.shared_workdir && input.workdir === undefined) {
      throw badInput("a shared workdir needs a workdir: name the directory the agents share", "workdir");
    }
    const base = input.workdir;
    const planned = agentNames.map((name, i) => {
      const workdir = base === undefined || input.shared_workdir ? base : path.join(base, name);
      try {
        return this.plan(name, { ...input, workdir });
      } catch (err) {
        throw err instanceof ServiceError ? forAgent(err, name, i) : err;
      }
    });
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
    this.scheduler.assertRoom(planned.length);
    return this.store(planned, origin, client);
  }

  /** Everything a launch checks, without storing anything: what `store` needs to insert the job. */
  private plan(agentName: string, input: JobInput): PlannedJob {
    const agent = this.deps.agents.get(agentName);
    if (!agent) throw notFound(`agent ${agentName} does not exist; list agents with corral_agents or GET /api/agents`, "agent");
    if (!agent.enabled)
      throw new ServiceError(`agent ${agentName} is disabled; enable it to run jobs`, 409, "agent", undefined, "agent_disabled", {
        agent: agentName,
      });
    const earlier = input.session === undefined ? undefined : this.earlierTurn(agent, input.session);
    this.deps.costs?.admit(agent, input.max_cost_usd ?? null);
    // A follow-up runs where its conversation did (CLIs keep their sessions per project directory), with its model.
    const workdir = resolveWorkdir(input.workdir ?? earlier?.workdir ?? agent.workdir, this.config);
    const model = input.model ?? earlier?.model ?? effectiveModel(agent, this.config);
    if (earlier) assertSessionReachable(agent, earlier, workdir);
    assertLaunchFits(agent, { prompt: input.prompt, workdir, model }, this.config);
    const busy = input.shared_workdir ? undefined : this.deps.jobs.activeInWorkdir(workdir);
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

  /** Stores planned jobs and their audit entries in one transaction (a failed write leaves none behind), then queues them. */
  private store(planned: PlannedJob[], origin: JobOrigin, client: string | null): Job[] {
    const ids = planned.map(() => newJobId());
    const groupId = ids.length > 1 ? (ids[0] ?? null) : null;
    const rows = this.atomically(() =>
      planned.map(({ agent, input, earlier, workdir, model }, i) => {
        const id = ids[i] as string;
        const inserted = this.deps.jobs.insert({
          id,
          agent: agent.name,
          status: "queued",
          prompt: input.prompt,
          workdir,
          model,
          conversationId: earlier ? (earlier.conversationId ?? earlier.id) : id,
          groupId,
          followUpOf: earlier?.id ?? null,
          timeoutS: input.timeout_s ?? agent.timeoutS,
          retry: input.retry ?? agent.retry,
          provider: agent.provider,
          maxCostUsd: input.max_cost_usd ?? null,
          maxTokens: input.max_tokens ?? null,
          origin,
          createdAt: Date.now(),
        });
        this.audit("launch", inserted, { door: origin, client });
        return this.announce(inserted);
      }),
    );
    for (const row of rows) this.scheduler.enqueue(row.agent, row.id);
    return rows.map(toJob);
  }

  /**
   * The earlier job a follow-up continues (`session`), refused with the reason unless its
   * conversation can really be continued: a follow-up never quietly starts afresh. A job still
   * queued or running has no finished turn to continue yet, so it is refused too (wait for it).
   */
  private earlierTurn(agent: AgentRow, session: string): JobRow {
    const earlier = this.deps.jobs.get(session);
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
    if (!this.deps.conversations?.began(earlier.id)) {
      throw conflict(`has no conversation to continue: ${never ?? `its worker never reached the model (${earlier.status})`}`);
    }
    return earlier;
  }

  /**
   * Whether job `id` has a conversation a follow-up would continue now. A conversation of agents
   * (the hub) continues a worker's last job when it can and otherwise asks afresh: a job that never
   * reached a session, or a worker kind without one, has no context to lose.
   */
  hasConversation(id: string): boolean {
    const earlier = this.deps.jobs.get(id);
    const agent = earlier && this.deps.agents.get(earlier.agent);
    if (!agent) return false;
    try {
      this.earlierTurn(agent, id);
      return true;
    } catch {
      return false;
    }
  }

  /** The jobs of a job's conversation, oldest first: the newest THREAD_LIMIT of them. */
  thread(id: string): JobThread {
    const job = this.get(id);
    const rows = this.deps.jobs.thread(job.conversationId, THREAD_LIMIT);
    // A job stored before conversations were recorded has none: it is its own.
    return { conversationId: job.conversationId, jobs: rows.length ? rows.map(toJob) : [job] };
  }

  /** The jobs launched together with this one (itself alone when it was launched alone), in launch order. */
  group(id: string): JobGroup {
    const job = this.get(id);
    return { jobs: job.groupId ? this.deps.jobs.group(job.groupId).map(toJob) : [job] };
  }

  find(id: string): Job | undefined {
    const row = this.deps.jobs.get(id);
    return row && toJob(row);
  }

  get(id: string): Job {
    const row = this.deps.jobs.get(id);
    if (!row) throw notFound(`job ${id} not found`, "job_id");
    return toJob(row);
  }

  list(query: JobListQuery): JobList {
    const { rows, ...counted } = this.deps.jobs.list(query);
    return { jobs: rows.map(toJob), ...counted };
  }

  /** Resolves once the job has ended (a queued job ends at once). */
  async cancel(id: string, actor?: Actor): Promise<Job> {
    const row = this.deps.jobs.get(id);
    if (!row) throw notFound(`job ${id} not found`, "job_id");
    if (isFinalStatus(row.status)) return toJob(row);
    // A job that never started ends here, in the transaction of its audit entry; a running one
    // ends once its worker is gone, so only the request is stored with the entry. The first
    // request is the one the job keeps (who and when, for its timeline); a restart honours it.
    const ended = this.atomically(() => {
      if (actor) this.audit("cancel", row, actor);
      if (row.cancelRequestedAt === null) {
        this.update(id, { cancelRequestedAt: Date.now(), cancelledBy: actor?.door ?? "server", cancelClient: actor?.client ?? null });
      }
      if (this.runner.cancelRetry(row)) return true;
      if (row.status !== "queued") return false;
      this.finish(id, { status: "cancelled", error: "cancelled before it started" });
      this.scheduler.remove(row.agent, id);
      return true;
    });
    if (!ended) await this.runner.stop(id, "cancelled", "cancelled");
    return this.get(id);
  }

  readOutput(id: string, cursor: number, limit: number): OutputPage {
    const job = this.get(id);
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
  readReadable(id: string, cursor: number, limit: number): ReadablePage {
    const job = this.get(id);
    const kind = this.deps.agents.get(job.agent)?.kind;
    return atCursor(() => readReadable(this.logFile(id), kind ? agentKindModule(kind) : undefined, cursor, limit, isFinalStatus(job.status)));
  }

  /** The latest line the Readable view shows (see lastReadableLine), for the panel's Running-now cards. */
  readableLine(job: Job): string {
    const kind = this.deps.agents.get(job.agent)?.kind;
    return lastReadableLine(this.logFile(job.id), kind ? agentKindModule(kind) : undefined, isFinalStatus(job.status));
  }

  /** The output's end; given the job just read, it is not read again (every `_done` reads its tail). */
  outputTail(job: string | Job, maxChars: number, streams?: OutputStream[]): string {
    const id = typeof job === "string" ? this.get(job).id : job.id;
    return tailText(this.logFile(id), maxChars, streams);
  }

  private logFile(id: string): string {
    return jobDataPaths(this.config.dataDir, id).log;
  }

  /** Resolves with the jobs once all have ended, or with their current state at the timeout. */
  waitFor(ids: string[], timeoutMs: number, signal?: AbortSignal): Promise<Job[]> {
    const current = () => ids.map((id) => this.get(id));
    const jobs = current();
    if (jobs.every((j) => isFinalStatus(j.status))) return Promise.resolve(jobs);
    return new Promise((resolve, reject) => {
      const pending = new Set(jobs.filter((j) => !isFinalStatus(j.status)).map((j) => j.id));
      const done = () => {
        clearTimeout(timer);
        this.off("job", onJob);
        signal?.removeEventListener("abort", done);
        // Runs from a timer or an event: a failed read (the registry closed at shutdown) must
        // reject this one wait, not escape as an uncaught exception.
        try {
          resolve(current());
        } catch (err) {
          reject(err);
        }
      };
      const onJob = (job: Job) => {
        if (pending.has(job.id) && isFinalStatus(job.status)) {
          pending.delete(job.id);
          if (!pending.size) done();
        }
      };
      const timer = setTimeout(done, Math.min(timeoutMs, MAX_TIMER_MS));
      this.on("job", onJob);
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  attempts(id: string): JobAttempt[] {
    this.get(id);
    return this.deps.jobs.attempts(id).map(({ jobId: _, ...attempt }) => attempt);
  }

  queuedCount(): number {
    return this.scheduler.queuedCount();
  }

  /** An agent's limit changed: start what may now start. */
  agentChanged(agent: string): void {
    this.scheduler.pump(agent);
  }

  /**
   * At boot: queued jobs wait again in order; running ones are picked up where they are. A job
   * that cannot be recovered ends `lost` with the reason; it never keeps the server from starting.
   */
  recover(): void {
    for (const row of this.deps.jobs.withStatus(["queued", "running"])) {
      try {
        if (row.status === "queued") this.scheduler.enqueue(row.agent, row.id);
        else this.runner.reattach(row);
      } catch (err) {
        this.runner.lose(row, `the server could not recover this job at start: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }

  /** Cancels every queued and running job (the server stops and was asked to take its workers along). */
  async cancelAll(): Promise<void> {
    const open = this.deps.jobs.withStatus(["queued", "running"]);
    await Promise.all(open.map((row) => this.cancel(row.id)));
  }

  /** Stops following workers and leaves them running; the next start picks them up. */
  shutdown(): void {
    this.runner.shutdown();
  }

  /**
   * Runs `fn` in one transaction. What it announces (job changes, audit entries) is told once the
   * transaction has committed, and never if it rolled back: nothing is announced that is not stored.
   */
  private atomically<T>(fn: () => T): T {
    if (this.afterCommit) return fn();
    const held: (() => void)[] = [];
    this.afterCommit = held;
    let result: T;
    try {
      result = this.deps.transact(fn);
    } finally {
      this.afterCommit = null;
    }
    for (const tell of held) tell();
    return result;
  }

  private whenStored(tell: () => void): void {
    if (this.afterCommit) this.afterCommit.push(tell);
    else tell();
  }

  private audit(action: AuditAction, row: JobRow, actor: Actor): void {
    const entry = this.deps.audit.store(action, row, actor);
    this.whenStored(() => this.deps.audit.announce(entry));
  }

  private announce(row: JobRow): JobRow {
    const job = toJob(row);
    this.whenStored(() => this.emit("job", job));
    return row;
  }

  private update(id: string, patch: JobPatch): JobRow {
    const row = this.deps.jobs.update(id, patch);
    if (!row) throw new Error(`job ${id} vanished from the registry`);
    return this.announce(row);
  }

  private finish(id: string, patch: JobPatch & { status: JobStatus }): JobRow {
    return this.update(id, { endedAt: Date.now(), ...patch });
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
