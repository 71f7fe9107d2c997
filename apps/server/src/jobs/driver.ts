import { mkdirSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { isFinalStatus, type JobWorktree, LOCAL_RUNNER, type JobStatus, retryBackoffMs } from "@corral/shared";
import { cliAvailability } from "../agents/availability.js";
import { cliAdapterFor } from "../agents/kind-lookup.js";
import type { CliAdapter, JobSpec, UsageReport, WorkerResult } from "../agents/types.js";
import type { JobPatch } from "../db/registry.js";
import type { Repos } from "../db/registry.js";
import type { Unit } from "../db/unit.js";
import { registryUnreachable } from "../db/registry-error.js";
import { lockTimedOut } from "../db/pg/lock-wait.js";
import type { AgentRow, JobAttemptRow, JobRow } from "../db/schema.js";
import { diskFull, diskFullMessage } from "../lib/disk-space.js";
import { ServiceError } from "../lib/errors.js";
import { MAX_TIMER_MS } from "../lib/timer.js";
import { PRIVATE_DIR_MODE } from "../lib/private-files.js";
import { hasUsage, noUsage, sumUsage, usageIn, usageOf } from "../costs/attempt-usage.js";
import { assertCommandLineFits, boundedInvocation } from "./command-line.js";
import { writeAnswerFile } from "../lib/confined-files.js";
import { reattachCli, startCli, startInProcess, type Execution, type ExecutionListeners } from "./execution.js";
import { OutputLog, tailText } from "./output-log.js";
import { groupAlive, killGroup } from "./process-group.js";
import { recoveryOf } from "./recovery.js";
import { retryReason } from "./retry.js";
import { refuseInProcessSandbox, sandboxed } from "../agents/sandbox.js";
import { workerEnv } from "../agents/worker-env.js";
import type { Scheduler } from "./scheduler.js";
import { Spawner } from "./spawner.js";
import type { JobDeps } from "./deps.js";
import type { JobStore } from "./job-store.js";
import { resolveWorkdir } from "./workdir.js";
import { assertMadeByCorral, createWorktree, removeWorktree, worktreeMissing } from "../worktrees/git-worktree.js";
import { prepareSandboxGit } from "../worktrees/sandbox-commits.js";
import { jobDataPaths, type JobDataPaths } from "./worker-process.js";

export type StopReason = "cancelled" | "timed_out" | "budget_exceeded";

/** How long a write that could not reach the registry waits before it is tried again. */
const REGISTRY_RETRY_MS = 1000;

type AttemptEnd = Pick<JobAttemptRow, "status" | "exitCode" | "error" | "endedAt" | "outputEnd">;

/** An attempt as it begins; it is stored once its worker started, or with its end if it never did. */
type AttemptStart = Pick<JobAttemptRow, "jobId" | "attempt" | "startedAt" | "outputStart">;

/** A queued job as it may start, or the agent whose slot it gives back when it may not. */
type Admitted = { row: JobRow; agent: AgentRow } | { refused: string };

interface ActiveJob {
  execution: Execution;
  log: OutputLog;
  timer: NodeJS.Timeout | null;
  stopReason: StopReason | null;
  stopError: string | null;
  /** Settles once the job's end is stored (or it was left running at shutdown). */
  settled: Promise<void>;
  /** Its log says its cost limit cannot stop it (said once). */
  saidBlindLimit?: boolean;
}

/**
 * A job's life once the scheduler lets it start: its worker, timeout, streamed usage and limits,
 * its end (with retries of transient failures), and picking it up again after a restart.
 */
export class JobDriver {
  private active = new Map<string, ActiveJob>();
  /** Jobs waiting out their retry backoff before they queue again. */
  private retryTimers = new Map<string, NodeJS.Timeout>();
  private closing = false;
  /** Starts this server's workers from a small process (see spawner.ts); started with the first. */
  private readonly spawner = new Spawner();

  constructor(
    private readonly deps: JobDeps,
    /** Where each change is written, then told. */
    private readonly store: Pick<JobStore, "update" | "finish" | "output" | "atomically">,
    private readonly scheduler: Scheduler,
  ) {}

  private get config() {
    return this.deps.config;
  }

  private get registry() {
    return this.deps.registry;
  }

  /** Whether this process runs the job: the job is its runner's (the server's are `local`'s). */
  private owns(row: JobRow): boolean {
    return row.runner === this.deps.runnerId;
  }

  /** Starts a job the scheduler let through. Never throws: whatever goes wrong ends this job, not the server. */
  async start(agent: string, id: string): Promise<void> {
    let admitted: Admitted;
    try {
      admitted = await this.admit(id);
    } catch (err) {
      // Nothing was stored or started yet: the job waits in its queue until the registry is back.
      if ((registryUnreachable(err) || lockTimedOut(err)) && !this.closing) {
        this.scheduler.startLater(agent, id);
        return;
      }
      await this.failUnexpectedly(id, err, agent);
      return;
    }
    try {
      await this.begin(id, admitted);
    } catch (err) {
      await this.failUnexpectedly(id, err, agent);
    }
  }

  /**
   * The job as it may start, or why not (it ended there, or is not queued any more), read and
   * written in one transaction: a cancel cannot end it in between. A transaction even when it
   * writes nothing: the lock every registry transaction takes is had before a worker starts. One
   * read outside it would start the worker first and meet that lock only as markRunning stores
   * the start, where a lock held past lock_timeout (a hostile runner's login may hold it) would
   * fail the job and leave its worker running with nothing following it; here it leaves the job
   * waiting in its queue until the lock is free.
   */
  private admit(id: string): Promise<Admitted> {
    return this.store.atomically(async (unit) => {
      const row = await unit.tx.jobs.get(id);
      const agent = row && (await unit.tx.agents.get(row.agent));
      if (!row || !agent || row.status !== "queued" || !this.owns(row) || this.closing) {
        if (row && !agent && row.status === "queued")
          await this.store.finish(id, { status: "failed", error: `agent ${row.agent} no longer exists` }, unit);
        return { refused: row?.agent ?? "" };
      }
      // The server's job of an agent given a runner label while it waited: the runners' now (a
      // retry finishes its attempts where it ran, as a runner's does). Not a worktree job: its
      // worktree is on this machine.
      if (this.deps.runnerId === LOCAL_RUNNER && agent.runnerLabel !== null && row.startedAt === null && row.worktree === null) {
        await this.store.update(id, { runner: null }, unit);
        await unit.tx.runners.announceQueued([agent.runnerLabel]);
        return { refused: agent.name };
      }
      try {
        // A budget used up while this job waited in the queue still holds it back.
        await this.deps.costs?.admit(agent, row.maxCostUsd, unit.tx);
      } catch (err) {
        if (!(err instanceof ServiceError)) throw err;
        await this.store.finish(id, { status: "budget_exceeded", error: err.message }, unit);
        return { refused: agent.name };
      }
      return { row, agent };
    });
  }

  private async begin(id: string, admitted: Admitted): Promise<void> {
    if ("refused" in admitted) {
      this.scheduler.released(admitted.refused);
      return;
    }
    const { row, agent } = admitted;
    const files = jobDataPaths(this.config.dataDir, id, row.attempt);
    mkdirSync(files.dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    const log = new OutputLog(files.log);
    if (row.attempt > 1) this.note(id, log, `\n[corral] attempt ${row.attempt} of ${row.retry?.maxAttempts ?? row.attempt}\n`);
    const attempt = { jobId: id, attempt: row.attempt, startedAt: Date.now(), outputStart: log.size };
    let execution: Execution;
    let started: JobRow;
    try {
      const placed = await this.worktreeAtStart(row);
      started = { ...placed, workdir: this.workdirAtStart(placed) };
      await this.deps.hooks?.starting(started);
      if (await this.leftWhileStarting(row, log, attempt)) return;
      execution = await this.execute(started, agent, files, log);
    } catch (err) {
      await this.deps.hooks?.ended(row, false);
      const error = diskFull(err)
        ? `the job was not started: ${diskFullMessage(this.config.dataDir)}`
        : err instanceof Error
          ? err.message
          : String(err);
      await this.store.atomically(async (unit) => {
        await unit.tx.jobs.startAttempt({ ...attempt, status: "failed", error, endedAt: Date.now(), outputEnd: log.size });
        await this.store.finish(id, { status: "failed", error }, unit);
      });
      log.close();
      this.scheduler.released(agent.name);
      return;
    }
    // While the worker started, the job may have been cancelled or the server begun to stop: the
    // worker is stopped again. At shutdown its end is no longer reported: it is killed unfollowed
    // (the job stays queued for the next start).
    if (this.closing) {
      execution.detach();
      if (execution.pid !== null) await killGroup(execution.pid, this.config.killGraceMs);
    } else if (await this.markRunning(started, execution, attempt)) {
      if (!this.closing) {
        this.follow(started, agent, execution, log, row.timeoutS * 1000, attempt.outputStart);
        execution.begin?.();
        return;
      }
      // The server began to stop while the start was stored: the worker runs on, and the next start follows it.
      execution.detach();
      log.close();
      return;
    } else {
      await execution.stop();
    }
    await this.leftWhileStarting(row, log, attempt);
  }

  /**
   * The attempt and the job's running state are one write (the registry never holds one without
   * the other), made only if the job is still queued when it is written: false when a cancel came first.
   */
  private markRunning(started: JobRow, execution: Execution, attempt: AttemptStart): Promise<boolean> {
    return this.store.atomically(async (unit) => {
      const now = await unit.tx.jobs.get(started.id);
      if (now?.status !== "queued" || !this.owns(now)) return false;
      // The attempt started when its worker did, as the job did (a retry keeps the first attempt's start: the job's duration runs from there).
      const at = Date.now();
      await unit.tx.jobs.startAttempt({ ...attempt, startedAt: at, status: "running" });
      await this.store.update(
        started.id,
        {
          status: "running",
          workdir: started.workdir,
          startedAt: now.startedAt ?? at,
          pid: execution.pid,
          pidStart: execution.pidStart,
          invocation: execution.invocation,
        },
        unit,
      );
      return true;
    });
  }

  /**
   * While the workdir's snapshot was taken (the job still queued), the job may have been cancelled,
   * given to the runners (its agent given a label) or the server begun to stop: then its worker is not started. A cancelled job's slot is freed; at
   * shutdown the job stays queued for the next start.
   */
  private async leftWhileStarting(row: JobRow, log: OutputLog, attempt: AttemptStart): Promise<boolean> {
    if (this.closing) {
      log.close();
      return true;
    }
    const now = await this.registry.jobs.get(row.id);
    // Still queued, and still this process's: it goes on starting.
    if (now?.status === "queued" && this.owns(now)) return false;
    void this.deps.hooks?.ended(row, false);
    // One given to the runners meanwhile (its agent given a label) is theirs, its attempt too: its slot here is given back all the same.
    if (!now || this.owns(now)) {
      await this.registry.jobs.startAttempt({
        ...attempt,
        status: now?.status ?? "cancelled",
        error: now?.error ?? null,
        endedAt: Date.now(),
        outputEnd: log.size,
      });
    }
    log.close();
    this.scheduler.released(row.agent);
    return true;
  }

  /**
   * A worktree job's worktree as it starts: a pending one (a runner's job) is made now, on the
   * machine that runs the job, and becomes its workdir; one made on another machine is refused.
   */
  private async worktreeAtStart(row: JobRow): Promise<JobRow> {
    const wt = row.worktree;
    if (!wt) return row;
    if (wt.state !== "pending") {
      const here = wt.runner === undefined ? this.deps.runnerId === LOCAL_RUNNER : ((await this.deps.worktreeHere?.(wt.runner)) ?? false);
      if (!here)
        throw new Error(
          `the job was not run: its worktree ${wt.path} is on the machine of ${wt.runner ? `runner ${wt.runner}` : "the server"}, not this one`,
        );
      // Only a record Corral made, whose folder is the job's workdir: never one written by other hands.
      assertMadeByCorral(wt);
      if (row.workdir !== wt.path) throw new Error(`the job was not run: its workdir ${row.workdir} is not its worktree ${wt.path}`);
      return row;
    }
    let made: JobWorktree;
    try {
      made = await createWorktree(resolveWorkdir(row.workdir, this.config), row.id, wt.base === "HEAD" ? undefined : wt.base);
    } catch (err) {
      throw new Error(`the job was not run: its worktree could not be made: ${err instanceof Error ? err.message : String(err)}`);
    }
    const worktree = this.deps.runnerId === LOCAL_RUNNER ? made : { ...made, runner: this.deps.runnerId };
    try {
      return await this.store.update(row.id, { worktree, workdir: made.path });
    } catch (err) {
      await removeWorktree(made).catch(() => undefined);
      throw err;
    }
  }

  /**
   * The workdir checked again, as at launch: while the job waited (queued, or before a retry) it
   * may have become a link out of the allowed roots. The worker, its sandbox and the answer file
   * all use the real path found now.
   */
  private workdirAtStart(row: JobRow): string {
    const gone = row.worktree ? worktreeMissing(row.worktree) : null;
    if (gone) throw new Error(`the job was not run: ${gone}`);
    try {
      return resolveWorkdir(row.workdir, this.config);
    } catch (err) {
      if (!(err instanceof ServiceError)) throw err;
      throw new Error(`the job was not run: its workdir changed after launch and no longer passes the check: ${err.message}`);
    }
  }

  /** A start or an end that threw where nothing should: the job fails with the reason and frees its agent's slot. */
  private async failUnexpectedly(id: string, err: unknown, agent: string): Promise<void> {
    const error = `internal error: ${err instanceof Error ? err.message : String(err)}`;
    try {
      const row = await this.registry.jobs.get(id);
      if (row && !isFinalStatus(row.status)) await this.store.finish(id, { status: "failed", error });
    } catch {
      // The registry cannot take it (closed at shutdown, or the row cannot be read): nothing more can be recorded.
    } finally {
      this.scheduler.released(agent);
    }
  }

  activeIds(): string[] {
    return [...this.active.keys()];
  }

  /** Stops a running job; it ends with the given status once its worker is gone. */
  async stop(id: string, reason: StopReason, error: string): Promise<void> {
    const active = this.active.get(id);
    if (!active) {
      if (reason === "cancelled") await this.cancelUnfollowed(id);
      return;
    }
    if (!active.stopReason) {
      active.stopReason = reason;
      active.stopError = error;
    }
    await active.execution.stop();
    await active.settled;
  }

  /** Ends a job waiting out its retry backoff, in the unit's transaction; false when it is not waiting. */
  async cancelRetry(row: JobRow, unit: Unit): Promise<boolean> {
    const timer = this.retryTimers.get(row.id);
    // Only a job this process holds: another's is its runner's to stop.
    if (!timer || !this.owns(row)) return false;
    await this.store.finish(row.id, { status: "cancelled", error: `cancelled while waiting to retry (attempt ${row.attempt})` }, unit);
    unit.afterCommit(() => {
      clearTimeout(timer);
      this.retryTimers.delete(row.id);
    });
    return true;
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
    this.spawner.close();
  }

  /** At boot, a job the registry says is running: follow its worker again, or call it lost. */
  async reattach(row: JobRow): Promise<void> {
    const files = jobDataPaths(this.config.dataDir, row.id, row.attempt);
    const agent = await this.registry.agents.get(row.agent);
    const recovery = agent ? recoveryOf(row, files, cliAdapterFor(agent.kind)) : null;
    if (!agent || !recovery || recovery.kind === "lost") {
      if (row.cancelRequestedAt !== null) void this.finishCancel(row);
      else await this.lose(row, recovery?.kind === "lost" ? recovery.reason : `agent ${row.agent} no longer exists`);
      return;
    }
    const spec = await this.specOf(row, agent);
    this.deps.hooks?.resumed(row);
    const log = new OutputLog(files.log);
    const execution = reattachCli(recovery.pid, row.pidStart, recovery.invocation, {
      adapter: recovery.adapter,
      spec,
      files,
      log,
      listeners: this.listeners(row.id),
      killGraceMs: this.config.killGraceMs,
    });
    // Counted only once nothing above can throw: a job that ends lost instead holds no slot.
    this.scheduler.adopt(row.agent);
    // Each attempt has the whole timeout, counted from its own start (the job's is its first attempt's).
    const current = (await this.registry.jobs.attempts(row.id)).find((a) => a.attempt === row.attempt);
    const startedAt = current?.startedAt ?? row.startedAt;
    const remaining = startedAt === null ? row.timeoutS * 1000 : startedAt + row.timeoutS * 1000 - Date.now();
    this.follow(row, agent, execution, log, Math.max(1, remaining), current?.outputStart ?? 0);
    // Cancelled while the previous server ran, which stopped before the worker did: it still ends cancelled.
    if (row.cancelRequestedAt !== null) void this.stop(row.id, "cancelled", "cancelled");
  }

  /**
   * A cancel of a job stored as running here that nothing here follows (its end could not be
   * stored, a row left so by a bug or by hand): it is not refused, it ends as a boot ends such a job.
   */
  private async cancelUnfollowed(id: string): Promise<void> {
    const row = await this.registry.jobs.get(id);
    if (row?.status !== "running" || !this.owns(row) || this.active.has(id) || this.closing) return;
    await this.finishCancel(row);
  }

  /**
   * At boot, a job cancelled before the server went down whose worker cannot be followed: its
   * wrapper died of the SIGTERM, but what it started may still run in its group. That is killed
   * (the grace period is over), and the job ends as it was asked to.
   */
  private async finishCancel(row: JobRow): Promise<void> {
    try {
      if (row.pid !== null && groupAlive(row.pid)) await killGroup(row.pid, this.config.killGraceMs, () => this.recordKill(row.id));
      void this.deps.hooks?.ended(row);
      await this.store.atomically(async (unit) => {
        await unit.tx.jobs.endAttempt(row.id, row.attempt, { status: "cancelled", error: "cancelled", endedAt: Date.now() });
        await this.store.finish(row.id, { status: "cancelled", error: "cancelled" }, unit);
      });
    } catch {
      // As for a lost job: the registry cannot record it, and the server still starts.
    }
  }

  /** At boot, a job that cannot be followed again ends `lost`, with why. */
  async lose(row: JobRow, reason: string): Promise<void> {
    try {
      // Boot goes on at once; what the file watcher still stores for this job comes after.
      void this.deps.hooks?.ended(row);
      await this.store.atomically(async (unit) => {
        await unit.tx.jobs.endAttempt(row.id, row.attempt, { status: "lost", error: reason, endedAt: Date.now() });
        await this.store.finish(row.id, { status: "lost", error: reason }, unit);
      });
    } catch {
      // The registry cannot record even that: the row stays as it is, and the server still starts.
    }
  }

  private async execute(row: JobRow, agent: AgentRow, files: JobDataPaths, log: OutputLog): Promise<Execution> {
    const jobSpec = await this.specOf(row, agent);
    const listeners = this.listeners(row.id);
    const inProcess = this.deps.inProcessAdapters?.[agent.kind];
    // A worktree job whose worker, or the model's commands, runs in the sandbox commits to a git folder of its own there.
    const boxed = inProcess ? inProcess.sandboxesCommands === true : agent.sandbox !== "none";
    if (boxed && row.worktree?.state === "active") jobSpec.sandboxGit = await prepareSandboxGit(row.worktree, row.id, this.config.dataDir);
    if (inProcess) {
      refuseInProcessSandbox(agent);
      return startInProcess(inProcess, jobSpec, log, listeners, files);
    }
    const adapter = cliAdapterFor(agent.kind);
    if (!adapter) throw new Error(`agent ${agent.name} has kind ${agent.kind}, which this server cannot run`);
    const availability = cliAvailability(agent, this.config);
    if (!availability.resolved) throw new Error(availability.hint ?? `${agent.name} is not available`);
    const baseEnv = workerEnv(agent, this.config, jobSpec.model);
    const invocation = sandboxed(boundedInvocation(adapter, jobSpec, availability.resolved, baseEnv), agent, this.config, jobSpec.sandboxGit);
    const env = { ...baseEnv, ...invocation.env };
    assertCommandLineFits(invocation, env, jobSpec);
    return startCli(invocation, env, { adapter, spec: jobSpec, files, log, listeners, killGraceMs: this.config.killGraceMs }, this.spawner);
  }

  /**
   * What the adapter gets: the job, and for a follow-up the earlier turn with the session its
   * worker reported, read at each start so every retry resumes the same one.
   */
  private async specOf(row: JobRow, agent: AgentRow): Promise<JobSpec> {
    const spec: JobSpec = { jobId: row.id, prompt: row.prompt, workdir: row.workdir, model: row.model, agent };
    if (row.followUpOf === null) return spec;
    const earlier = await this.registry.jobs.get(row.followUpOf);
    if (!earlier)
      throw new Error(`the job continues job ${row.followUpOf}, which is no longer in the registry; it was not run rather than started afresh`);
    return { ...spec, followUp: { jobId: earlier.id, workerSession: earlier.workerSession } };
  }

  /**
   * Corral's own line in the log, announced like the worker's output so a live stream has no gap.
   * One the disk has no room for is left out: the job's record says why it ended.
   */
  private note(id: string, log: OutputLog, text: string): void {
    const data = Buffer.from(text);
    let cursor: number;
    try {
      cursor = log.append("sys", data);
    } catch (err) {
      if (diskFull(err)) return;
      throw err;
    }
    this.store.output({ jobId: id, stream: "sys", data, cursor });
  }

  private listeners(id: string): ExecutionListeners {
    return {
      chunk: (stream, data, cursor) => this.store.output({ jobId: id, stream, data, cursor }),
      usage: (report) => void this.recordUsage(id, report),
      killed: () => void this.recordKill(id),
    };
  }

  /**
   * Stored once SIGKILL has gone out; the first one counts (a group can be signalled by a stop and
   * by the worker's end), so it is read and written in one transaction.
   */
  private async recordKill(id: string): Promise<void> {
    // The moment it went out: the worker's end, which it brings about, is stamped as it is reported.
    const at = Date.now();
    try {
      await this.store.atomically(async (unit) => {
        if ((await unit.tx.jobs.get(id))?.killedAt === null) await this.store.update(id, { killedAt: at }, unit);
      });
    } catch {
      // The kill itself has happened; a registry that cannot take the note (closed at shutdown) must not fail the stop.
    }
  }

  /** Streamed usage: stored with its cost, and the job stopped once it passes its own limits. */
  private async recordUsage(id: string, report: UsageReport): Promise<void> {
    let row: JobRow;
    try {
      row = await this.store.atomically(async (unit) => this.store.update(id, await this.withAttemptUsage(unit.tx, id, usagePatch(report)), unit));
    } catch {
      // A report the registry cannot take (closed at shutdown) is lost; the worker's end brings its final usage.
      return;
    }
    const over = this.deps.costs?.overLimit(row);
    if (over && row.status === "running") void this.stop(id, "budget_exceeded", over);
    // A cost limit that cannot apply is said in the job's output (every door reads it) as soon as it is known, never left to be believed.
    const active = this.active.get(id);
    const blind = active && !active.saidBlindLimit ? this.deps.costs?.blindLimit(row) : null;
    if (active && blind) {
      active.saidBlindLimit = true;
      this.note(id, active.log, `\n[corral] ${blind}\n`);
    }
  }

  /**
   * The usage in `patch` is the current attempt's (a worker reports its own run's): stored on the
   * attempt with its cost (reported, estimated or unknown), and the job's usage becomes the sum of
   * its attempts', read and written in the transaction that stores the patch.
   */
  private async withAttemptUsage(tx: Repos, id: string, patch: JobPatch): Promise<JobPatch> {
    const row = await tx.jobs.get(id);
    if (!row) return patch;
    const attempts = await tx.jobs.attempts(id);
    const others = attempts.filter((a) => a.attempt !== row.attempt);
    const stored = attempts.find((a) => a.attempt === row.attempt);
    let own = { ...(stored ? usageOf(stored) : noUsage()), ...usageIn(patch) };
    // A job whose attempts kept no usage of their own (begun before they did): its columns stand.
    if (!hasUsage(own) && !others.some(hasUsage)) return patch;
    if (this.deps.costs) own = { ...own, ...(await this.deps.costs.price({ ...row, ...own }, tx)) };
    if (stored) await tx.jobs.endAttempt(id, row.attempt, own);
    return { ...patch, ...sumUsage([...others, own]) };
  }

  /**
   * `agent`: as the job started with it, which its end is read by (its kind's parser and session
   * files), whatever was changed meanwhile. `outputStart`: where this attempt's output begins in
   * the job's log; its error and retry are read from there.
   */
  private follow(row: JobRow, agent: AgentRow, execution: Execution, log: OutputLog, timeoutMs: number, outputStart: number): void {
    const active: ActiveJob = { execution, log, timer: null, stopReason: null, stopError: null, settled: Promise.resolve() };
    this.active.set(row.id, active);
    active.timer = setTimeout(() => void this.stop(row.id, "timed_out", `timed out after ${row.timeoutS} s`), Math.min(timeoutMs, MAX_TIMER_MS));
    active.settled = execution.ended
      .then(async (end) => {
        if (this.active.get(row.id) !== active) return; // detached at shutdown
        if (active.timer) clearTimeout(active.timer);
        active.timer = null;
        const adapter = cliAdapterFor(agent.kind);
        const result = adapter ? withSessionModel(adapter, end.result, workerEnv(agent, this.config, row.model)) : end.result;
        const finalText = result.finalText ?? null;
        if (finalText && adapter?.finalTextFile) {
          await writeAnswerFile(row.workdir, adapter.finalTextFile, finalText, (line) => this.note(row.id, log, line));
          if (this.active.get(row.id) !== active) return; // detached at shutdown while it was written
        }
        await this.whenReachable(async () => this.deps.hooks?.ended(row));
        if (this.active.get(row.id) !== active) return; // detached at shutdown while the workdir was compared
        // The job stays active until its end is stored: a cancel until then waits for that end.
        // An exit code 0 is the worker's word, unless its own output says the run failed; that
        // account says more than an exit code. A worker killed by a signal never got to give one.
        const failure = end.exitCode === null ? undefined : result.failure;
        const status: JobStatus = active.stopReason ?? (end.exitCode === 0 && !end.error && !failure ? "succeeded" : "failed");
        const error =
          active.stopError ??
          (status === "failed"
            ? (end.error ?? failure ?? describeExit(end.exitCode, result.error ?? tailText(log.file, 600, ["err"], outputStart)))
            : null);
        const endedAt = workerEndedAt(end.endedAt, row.startedAt);
        const attemptEnd = { status, exitCode: end.exitCode, error, endedAt, outputEnd: log.size };
        const usage = result.usage ? usagePatch(result.usage) : {};
        const retry =
          status === "failed" ? await retryReason(row.retry, row.attempt, end.exitCode, tailText(log.file, 8192, undefined, outputStart)) : null;
        if (retry && row.retry && !this.closing) {
          await this.scheduleRetry(row, row.retry, retry, log, attemptEnd, usage);
          this.active.delete(row.id);
          return;
        }
        // The attempt's end and the job's are one write, stored once the registry can take it.
        await this.whenReachable(() =>
          this.store.atomically(async (unit) => {
            await unit.tx.jobs.endAttempt(row.id, row.attempt, attemptEnd);
            await this.store.finish(
              row.id,
              {
                status,
                endedAt,
                exitCode: end.exitCode,
                error,
                finalText,
                outputBytes: log.textBytes,
                // What a follow-up of this job resumes; stored with its end, before that is announced.
                ...(result.sessionId ? { workerSession: result.sessionId } : {}),
                ...(await this.withAttemptUsage(unit.tx, row.id, usage)),
              },
              unit,
            );
          }),
        );
        this.active.delete(row.id);
        log.close();
        this.scheduler.released(row.agent);
      })
      .catch((err: unknown) => {
        this.active.delete(row.id);
        return this.failUnexpectedly(row.id, err, row.agent);
      });
  }

  /**
   * Runs `write` again after a pause for as long as the registry cannot be reached (PostgreSQL
   * restarting, the network) or its disk is full past the reserve: a job's end is not dropped, nor
   * its worker called lost, for that.
   */
  private async whenReachable<T>(write: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        return await write();
      } catch (err) {
        if (!(registryUnreachable(err) || lockTimedOut(err) || diskFull(err)) || this.closing) throw err;
        await sleep(REGISTRY_RETRY_MS);
      }
    }
  }

  /** The attempt failed in a way the policy calls transient: queue the job again after the backoff. */
  private async scheduleRetry(
    row: JobRow,
    policy: NonNullable<JobRow["retry"]>,
    reason: string,
    log: OutputLog,
    attemptEnd: AttemptEnd,
    usage: JobPatch,
  ): Promise<void> {
    const next = row.attempt + 1;
    const waitMs = retryBackoffMs(policy, next);
    this.note(row.id, log, `\n[corral] attempt ${row.attempt} of ${policy.maxAttempts} failed (${reason}); retrying in ${waitMs / 1000} s\n`);
    const retrying = await this.store.atomically(async (unit) => {
      await unit.tx.jobs.endAttempt(row.id, row.attempt, attemptEnd);
      // The ended attempt's final usage counts, as every attempt's does.
      const used = await this.withAttemptUsage(unit.tx, row.id, usage);
      // A cancel asked for while the attempt ended wins over the retry.
      if ((await unit.tx.jobs.get(row.id))?.cancelRequestedAt != null) {
        await this.store.finish(row.id, { ...used, status: "cancelled", error: "cancelled", outputBytes: log.textBytes }, unit);
        return false;
      }
      await this.store.update(row.id, { ...used, status: "queued", attempt: next, pid: null, pidStart: null, outputBytes: log.textBytes }, unit);
      return true;
    });
    log.close();
    this.scheduler.released(row.agent);
    if (!retrying) return;
    const timer = setTimeout(() => {
      this.retryTimers.delete(row.id);
      this.scheduler.enqueue(row.agent, row.id);
    }, waitMs);
    this.retryTimers.set(row.id, timer);
  }
}

/**
 * The end to record: the worker's own exit time when it is known (it ended while the server was
 * down), kept between the job's start and now, as a time a worker's file gives may be anything.
 */
function workerEndedAt(at: number | undefined, startedAt: number | null): number {
  const now = Date.now();
  if (at === undefined || !Number.isFinite(at)) return now;
  return Math.min(now, Math.max(at, startedAt ?? at));
}

function describeExit(exitCode: number | null, stderrTail: string): string {
  const head = exitCode === null ? "the worker was killed by a signal" : `exit code ${exitCode}`;
  const tail = stderrTail.trim();
  return tail ? `${head}\n${tail}` : head;
}

/** Usage that names no model gets the one the CLI's session record names (codex run without `-m`). */
function withSessionModel(adapter: CliAdapter, result: WorkerResult, env: Record<string, string>): WorkerResult {
  if (!result.usage || result.usage.model || !result.sessionId || !adapter.sessionModel) return result;
  const model = adapter.sessionModel(result.sessionId, env);
  return model ? { ...result, usage: { ...result.usage, model } } : result;
}

/**
 * What a worker reported as usage, as columns. A worker's output is untrusted: a count that is
 * not a whole number of at least 0, or a cost that is negative, NaN or infinite, is not stored
 * (a budget sums these, and a negative or NaN one would undo it; PostgreSQL refuses them too).
 */
function usagePatch(report: UsageReport): JobPatch {
  const patch: JobPatch = {};
  const count = (n: number | undefined) => n !== undefined && Number.isSafeInteger(n) && n >= 0;
  if (report.model !== undefined) patch.usageModel = report.model;
  if (count(report.inputTokens)) patch.inputTokens = report.inputTokens;
  if (count(report.outputTokens)) patch.outputTokens = report.outputTokens;
  if (count(report.cachedInputTokens)) patch.cachedInputTokens = report.cachedInputTokens;
  if (report.costUsd !== undefined && Number.isFinite(report.costUsd) && report.costUsd >= 0) {
    patch.costUsd = report.costUsd;
    patch.costSource = "reported";
  }
  return patch;
}
