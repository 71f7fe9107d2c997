import { randomBytes } from "node:crypto";
import { EventEmitter } from "node:events";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import {
  isFinalStatus,
  type Job,
  type JobAttempt,
  type JobInput,
  type JobList,
  type JobListQuery,
  type JobOrigin,
  type JobStatus,
  type OutputPage,
  type OutputStream,
} from "@corral/shared";
import { cliAvailability } from "../agents/availability.js";
import { cliAdapterFor, effectiveModel } from "../agents/catalog.js";
import type { InProcessAdapter, JobSpec, UsageReport } from "../agents/types.js";
import type { AppConfig } from "../config.js";
import type { JobCostPolicy } from "../costs/service.js";
import type { AgentsRepo } from "../db/repos/agents.js";
import type { JobPatch, JobsRepo } from "../db/repos/jobs.js";
import type { AgentRow, JobRow } from "../db/schema.js";
import { notFound, ServiceError } from "../lib/errors.js";
import type { Actor, AuditService } from "../observability/audit.js";
import { reattachCli, startCli, startInProcess, type Execution, type ExecutionListeners } from "./execution.js";
import { toJob } from "./job-view.js";
import { CursorError, OutputLog, readOutput, tailText } from "./output-log.js";
import { Scheduler } from "./scheduler.js";
import { backoffMs, retryReason } from "./retry.js";
import { recoveryOf } from "./recovery.js";
import { jobFiles } from "./worker-process.js";
import { resolveWorkdir } from "./workdir.js";
import { refuseInProcessSandbox, sandboxed } from "./sandbox.js";

export interface OutputEvent {
  jobId: string;
  stream: OutputStream;
  text: string;
  /** Where the next read starts after this chunk. */
  cursor: number;
}

export interface JobServiceEvents {
  /** A job was created or changed (status, usage); the row is already stored. */
  job: [Job];
  /** New output, already in the job's log. */
  output: [OutputEvent];
}

type StopReason = "cancelled" | "timed_out" | "budget_exceeded";

interface ActiveJob {
  execution: Execution;
  log: OutputLog;
  timer: NodeJS.Timeout | null;
  stopReason: StopReason | null;
  stopError: string | null;
  /** Settles once the job's end is stored (or it was left running at shutdown). */
  settled: Promise<void>;
}

export interface JobServiceDeps {
  config: AppConfig;
  jobs: JobsRepo;
  agents: AgentsRepo;
  /** In-process adapters by agent kind (the Ollama loop). */
  inProcessAdapters?: Partial<Record<string, InProcessAdapter>>;
  hooks?: JobHooks;
  /** Records who launched and cancelled what. */
  audit?: Pick<AuditService, "record">;
  /** Budgets, prices and per-job limits. */
  costs?: JobCostPolicy;
}

/** Work tied to a worker's life (the file watcher): before it starts, and after it ended but before the final status is stored. */
export interface JobHooks {
  starting(row: JobRow): void;
  /** The job's worker was picked up again after a restart. */
  resumed(row: JobRow): void;
  ended(row: JobRow): void;
}

/** setTimeout's largest delay; longer ones would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const newJobId = () => randomBytes(8).toString("hex").slice(0, 12);

/** Jobs from launch to their end: the one service behind MCP, REST and the panel. */
export class JobService extends EventEmitter<JobServiceEvents> {
  private active = new Map<string, ActiveJob>();
  /** Jobs waiting out their retry backoff before they queue again. */
  private retryTimers = new Map<string, NodeJS.Timeout>();
  private scheduler: Scheduler;
  private closing = false;

  constructor(private readonly deps: JobServiceDeps) {
    super();
    this.setMaxListeners(0);
    this.scheduler = new Scheduler(
      (agent) => this.deps.agents.get(agent)?.maxConcurrent ?? 1,
      (jobId) => void this.start(jobId),
      deps.config.queueLimit,
    );
  }

  private get config(): AppConfig {
    return this.deps.config;
  }

  launch(agentName: string, input: JobInput, origin: JobOrigin, client: string | null = null): Job {
    const agent = this.deps.agents.get(agentName);
    if (!agent) throw notFound(`agent ${agentName} does not exist; list agents with corral_agents or GET /api/agents`, "agent");
    if (!agent.enabled) throw new ServiceError(`agent ${agentName} is disabled; enable it to run jobs`, 409, "agent");
    this.scheduler.assertRoom();
    this.deps.costs?.admit(agent, input.max_cost_usd ?? null);
    const workdir = resolveWorkdir(input.workdir ?? agent.workdir, this.config.workdirRoots, this.config.homeDir);
    const busy = input.shared_workdir ? undefined : this.deps.jobs.activeInWorkdir(workdir);
    if (busy) {
      throw new ServiceError(
        `${workdir} is in use by job ${busy.id} (${busy.agent}, ${busy.status}); use another workdir, wait for that job (corral_wait), or pass shared_workdir: true to let both write there`,
        409,
        "workdir",
      );
    }
    const row = this.deps.jobs.insert({
      id: newJobId(),
      agent: agent.name,
      status: "queued",
      prompt: input.prompt,
      workdir,
      model: input.model ?? effectiveModel(agent, this.config),
      timeoutS: input.timeout_s ?? agent.timeoutS,
      retry: input.retry ?? agent.retry,
      provider: agent.provider,
      maxCostUsd: input.max_cost_usd ?? null,
      maxTokens: input.max_tokens ?? null,
      origin,
      createdAt: Date.now(),
    });
    this.deps.audit?.record("launch", row, { door: origin, client });
    this.announce(row);
    this.scheduler.enqueue(agent.name, row.id);
    return toJob(row);
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
    const { rows, total } = this.deps.jobs.list(query);
    return { jobs: rows.map(toJob), total };
  }

  /** Resolves once the job has ended (a queued job ends at once). */
  async cancel(id: string, actor?: Actor): Promise<Job> {
    const row = this.deps.jobs.get(id);
    if (!row) throw notFound(`job ${id} not found`, "job_id");
    if (isFinalStatus(row.status)) return toJob(row);
    if (actor) this.deps.audit?.record("cancel", row, actor);
    const retryTimer = this.retryTimers.get(id);
    if (retryTimer) {
      clearTimeout(retryTimer);
      this.retryTimers.delete(id);
      return toJob(this.finish(id, { status: "cancelled", error: `cancelled while waiting to retry (attempt ${row.attempt})` }));
    }
    if (row.status === "queued" && this.scheduler.remove(row.agent, id)) {
      return toJob(this.finish(id, { status: "cancelled", error: "cancelled before it started" }));
    }
    await this.stop(id, "cancelled", "cancelled");
    return this.get(id);
  }

  /** Stops a running job; it ends with the given status once its worker is gone. */
  async stop(id: string, reason: StopReason, error: string): Promise<void> {
    const active = this.active.get(id);
    if (!active) return;
    if (!active.stopReason) {
      active.stopReason = reason;
      active.stopError = error;
    }
    await active.execution.stop();
    await active.settled;
  }

  readOutput(id: string, cursor: number, limit: number): OutputPage {
    const job = this.get(id);
    try {
      const page = readOutput(jobFiles(this.config.dataDir, id).log, cursor, limit);
      const chunks = page.chunks.map(({ stream, text }) => ({ stream, text }));
      return { chunks, cursor: page.cursor, complete: isFinalStatus(job.status) && page.cursor >= page.size };
    } catch (err) {
      if (err instanceof CursorError) throw new ServiceError(err.message, 400, "cursor");
      throw err;
    }
  }

  outputTail(id: string, maxChars: number, streams?: OutputStream[]): string {
    this.get(id);
    return tailText(jobFiles(this.config.dataDir, id).log, maxChars, streams);
  }

  /** Resolves with the jobs once all have ended, or with their current state at the timeout. */
  waitFor(ids: string[], timeoutMs: number, signal?: AbortSignal): Promise<Job[]> {
    const current = () => ids.map((id) => this.get(id));
    const jobs = current();
    if (jobs.every((j) => isFinalStatus(j.status))) return Promise.resolve(jobs);
    return new Promise((resolve) => {
      const pending = new Set(jobs.filter((j) => !isFinalStatus(j.status)).map((j) => j.id));
      const done = () => {
        clearTimeout(timer);
        this.off("job", onJob);
        signal?.removeEventListener("abort", done);
        resolve(current());
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

  /** At boot: queued jobs wait again in order; running ones are picked up where they are. */
  recover(): void {
    for (const row of this.deps.jobs.withStatus(["queued", "running"])) {
      if (row.status === "queued") this.scheduler.enqueue(row.agent, row.id);
      else this.reattach(row);
    }
  }

  /** Cancels every queued and running job (the server stops and was asked to take its workers along). */
  async cancelAll(): Promise<void> {
    const open = this.deps.jobs.withStatus(["queued", "running"]);
    await Promise.all(open.map((row) => this.cancel(row.id)));
  }

  /** Stops following workers and leaves them running; the next start picks them up. */
  shutdown(): void {
    this.closing = true;
    for (const timer of this.retryTimers.values()) clearTimeout(timer);
    this.retryTimers.clear();
    for (const active of this.active.values()) {
      if (active.timer) clearTimeout(active.timer);
      active.execution.detach();
      active.log.close();
    }
    this.active.clear();
  }

  private announce(row: JobRow): JobRow {
    this.emit("job", toJob(row));
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

  private spec(row: JobRow, agent: AgentRow): JobSpec {
    return { jobId: row.id, prompt: row.prompt, workdir: row.workdir, model: row.model, agent };
  }

  private executionListeners(id: string): ExecutionListeners {
    return {
      chunk: (stream, text, cursor) => this.emit("output", { jobId: id, stream, text, cursor }),
      usage: (report) => this.recordUsage(id, report),
    };
  }

  /** Streamed usage: stored with its cost, and the job stopped once it passes its own limits. */
  private recordUsage(id: string, report: UsageReport): void {
    const row = this.update(id, this.priced(id, usagePatch(report)));
    const over = this.deps.costs?.overLimit(row);
    if (over && row.status === "running") void this.stop(id, "budget_exceeded", over);
  }

  /** Adds the cost (reported, estimated or unknown) of the job's usage after this patch. */
  private priced(id: string, patch: JobPatch): JobPatch {
    const row = this.deps.jobs.get(id);
    if (!row || !this.deps.costs) return patch;
    return { ...patch, ...this.deps.costs.price({ ...row, ...patch } as JobRow) };
  }

  private async start(id: string): Promise<void> {
    const row = this.deps.jobs.get(id);
    const agent = row && this.deps.agents.get(row.agent);
    if (!row || !agent || row.status !== "queued" || this.closing) {
      if (row && !agent) this.finish(id, { status: "failed", error: `agent ${row.agent} no longer exists` });
      this.scheduler.released(row?.agent ?? "");
      return;
    }
    try {
      // A budget used up while this job waited in the queue still holds it back.
      this.deps.costs?.admit(agent, row.maxCostUsd);
    } catch (err) {
      if (!(err instanceof ServiceError)) throw err;
      this.finish(id, { status: "budget_exceeded", error: err.message });
      this.scheduler.released(agent.name);
      return;
    }
    const files = jobFiles(this.config.dataDir, id, row.attempt);
    mkdirSync(files.dir, { recursive: true });
    const log = new OutputLog(files.log);
    if (row.attempt > 1) log.append("sys", `\n[corral] attempt ${row.attempt} of ${row.retry?.max_attempts ?? row.attempt}\n`);
    this.deps.jobs.startAttempt({ jobId: id, attempt: row.attempt, status: "running", startedAt: Date.now(), outputStart: log.size });
    let execution: Execution;
    try {
      this.deps.hooks?.starting(row);
      execution = this.execute(row, agent, files, log);
    } catch (err) {
      this.deps.hooks?.ended(row);
      const error = err instanceof Error ? err.message : String(err);
      this.deps.jobs.endAttempt(id, row.attempt, { status: "failed", error, endedAt: Date.now(), outputEnd: log.size });
      log.close();
      this.finish(id, { status: "failed", error });
      this.scheduler.released(agent.name);
      return;
    }
    this.update(id, {
      status: "running",
      startedAt: Date.now(),
      pid: execution.pid,
      pidStart: execution.pidStart,
      invocation: execution.invocation,
    });
    this.follow(row, execution, log, row.timeoutS * 1000);
  }

  private execute(row: JobRow, agent: AgentRow, files: ReturnType<typeof jobFiles>, log: OutputLog): Execution {
    const spec = this.spec(row, agent);
    const listeners = this.executionListeners(row.id);
    const inProcess = this.deps.inProcessAdapters?.[agent.kind];
    if (inProcess) {
      refuseInProcessSandbox(agent);
      return startInProcess(inProcess, spec, log, listeners);
    }
    const adapter = cliAdapterFor(agent.kind);
    if (!adapter) throw new Error(`agent ${agent.name} has kind ${agent.kind}, which this server cannot run`);
    const availability = cliAvailability(agent, this.config);
    if (!availability.resolved) throw new Error(availability.hint ?? `${agent.name} is not available`);
    const invocation = sandboxed(adapter.invocation(spec, availability.resolved), agent, this.config);
    const env = { ...this.config.workerEnv, ...agent.env, ...invocation.env };
    return startCli(invocation, env, { adapter, spec, files, log, listeners, killGraceMs: this.config.killGraceMs });
  }

  private follow(row: JobRow, execution: Execution, log: OutputLog, timeoutMs: number): void {
    const active: ActiveJob = { execution, log, timer: null, stopReason: null, stopError: null, settled: Promise.resolve() };
    this.active.set(row.id, active);
    active.timer = setTimeout(
      () => void this.stop(row.id, "timed_out", `timed out after ${row.timeoutS} s`),
      Math.min(timeoutMs, MAX_TIMER_MS),
    );
    active.settled = execution.ended.then((end) => {
      if (this.active.get(row.id) !== active) return; // detached at shutdown
      if (active.timer) clearTimeout(active.timer);
      this.active.delete(row.id);
      const agent = this.deps.agents.get(row.agent);
      const adapter = agent && cliAdapterFor(agent.kind);
      const finalText = end.result.finalText ?? null;
      if (finalText && adapter?.finalTextFile) writeFileSync(path.join(row.workdir, adapter.finalTextFile), finalText);
      this.deps.hooks?.ended(row);
      const status: JobStatus = active.stopReason ?? (end.exitCode === 0 && !end.error ? "succeeded" : "failed");
      const error =
        active.stopError ?? (status === "failed" ? (end.error ?? describeExit(end.exitCode, end.result.error ?? tailText(log.file, 600, ["err"]))) : null);
      this.deps.jobs.endAttempt(row.id, row.attempt, { status, exitCode: end.exitCode, error, endedAt: Date.now(), outputEnd: log.size });
      const retry = status === "failed" ? retryReason(row.retry, row.attempt, end.exitCode, tailText(log.file, 8192)) : null;
      if (retry && row.retry && !this.closing) {
        this.scheduleRetry(row, row.retry, retry, log);
        return;
      }
      this.finish(row.id, {
        status,
        exitCode: end.exitCode,
        error,
        finalText,
        outputBytes: log.size,
        ...this.priced(row.id, end.result.usage ? usagePatch(end.result.usage) : {}),
      });
      log.close();
      this.scheduler.released(row.agent);
    });
  }

  /** The attempt failed in a way the policy calls transient: queue the job again after the backoff. */
  private scheduleRetry(row: JobRow, policy: NonNullable<JobRow["retry"]>, reason: string, log: OutputLog): void {
    const next = row.attempt + 1;
    const waitMs = backoffMs(policy, next);
    log.append("sys", `\n[corral] attempt ${row.attempt} of ${policy.max_attempts} failed (${reason}); retrying in ${waitMs / 1000} s\n`);
    this.update(row.id, { status: "queued", attempt: next, pid: null, pidStart: null, outputBytes: log.size });
    log.close();
    this.scheduler.released(row.agent);
    const timer = setTimeout(() => {
      this.retryTimers.delete(row.id);
      this.scheduler.enqueue(row.agent, row.id);
    }, waitMs);
    this.retryTimers.set(row.id, timer);
  }

  private reattach(row: JobRow): void {
    const files = jobFiles(this.config.dataDir, row.id, row.attempt);
    const agent = this.deps.agents.get(row.agent);
    const recovery = agent ? recoveryOf(row, files, cliAdapterFor(agent.kind)) : null;
    if (!agent || !recovery || recovery.kind === "lost") {
      const reason = recovery?.kind === "lost" ? recovery.reason : `agent ${row.agent} no longer exists`;
      this.deps.jobs.endAttempt(row.id, row.attempt, { status: "lost", error: reason, endedAt: Date.now() });
      this.finish(row.id, { status: "lost", error: reason });
      return;
    }
    this.scheduler.adopt(row.agent);
    this.deps.hooks?.resumed(row);
    const log = new OutputLog(files.log);
    const execution = reattachCli(recovery.pid, row.pidStart, recovery.invocation, {
      adapter: recovery.adapter,
      spec: this.spec(row, agent),
      files,
      log,
      listeners: this.executionListeners(row.id),
      killGraceMs: this.config.killGraceMs,
    });
    const remaining = row.startedAt === null ? row.timeoutS * 1000 : row.startedAt + row.timeoutS * 1000 - Date.now();
    this.follow(row, execution, log, Math.max(1, remaining));
  }
}

function describeExit(exitCode: number | null, stderrTail: string): string {
  const head = exitCode === null ? "the worker was killed by a signal" : `exit code ${exitCode}`;
  const tail = stderrTail.trim();
  return tail ? `${head}\n${tail}` : head;
}

function usagePatch(report: UsageReport): JobPatch {
  const patch: JobPatch = {};
  if (report.model !== undefined) patch.usageModel = report.model;
  if (report.inputTokens !== undefined) patch.inputTokens = report.inputTokens;
  if (report.outputTokens !== undefined) patch.outputTokens = report.outputTokens;
  if (report.cachedInputTokens !== undefined) patch.cachedInputTokens = report.cachedInputTokens;
  if (report.costUsd !== undefined) {
    patch.costUsd = report.costUsd;
    patch.costSource = "reported";
  }
  return patch;
}
