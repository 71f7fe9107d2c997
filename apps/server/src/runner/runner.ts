import { randomBytes } from "node:crypto";
import { inProcessAdapters } from "../agents/kind-lookup.js";
import { AuditService } from "../audit/service.js";
import { ConfigError } from "../config.js";
import { CostService } from "../costs/service.js";
import { openPgDb, type PgHandle } from "../db/pg/client.js";
import { CANCEL_CHANNEL, type ChannelListener, FILES_CHANGED, JOB_CHANNEL, listen, QUEUE_CHANNEL, REQUEST_CHANNEL } from "../db/pg/job-changes.js";
import { createPgRegistry } from "../db/pg/registry.js";
import type { Registry } from "../db/registry.js";
import type { JobOutputRow, RunnerRow } from "../db/schema.js";
import { corralVersion } from "../lib/version.js";
import { fileHooks } from "../jobs/file-hooks.js";
import { withWorktrees } from "../review/worktree-hooks.js";
import { FileWatcher } from "../jobs/file-watcher.js";
import { createJobParts, type JobParts } from "../jobs/parts.js";
import { WorkdirService } from "../workdirs/service.js";
import { BrowsingRequests } from "./browsing-requests.js";
import { WorktreeAnswers } from "./worktree-answers.js";
import { fencedRegistry } from "./fenced-registry.js";
import { checkRunnerIdentity } from "./identity.js";
import type { RunnerSettings } from "./settings.js";

export interface RunnerTimings {
  /** How often it tells the registry it is alive. */
  heartbeatMs: number;
  /**
   * How often it looks for jobs to claim, besides at once when the server tells it a job waits for
   * one of its labels (QUEUE_CHANNEL) and whenever one of its jobs ends. The poll only catches
   * what NOTIFY missed (its listening connection was down, or a job was queued by a write that
   * told no one), so it can be slow; each poll costs every runner a transaction.
   */
  claimMs: number;
}

const TIMINGS: RunnerTimings = { heartbeatMs: 2000, claimMs: 2000 };

/**
 * `corral runner`: the server's job engine (createJobParts: its queues, JobDriver) on the registry in PostgreSQL,
 * without HTTP, fed by claims instead of launches. Its jobs run as the server's do (process
 * groups, capture, file events, sandbox, retries) and every change is stored in the registry,
 * then told to the server with NOTIFY (the job's id only).
 */
export class Runner {
  private heartbeat: NodeJS.Timeout | null = null;
  private poll: NodeJS.Timeout | null = null;
  private claiming = false;
  private claimAgain = false;
  /** The last claim left jobs waiting (behind a limit, or another's claim): one of its jobs ending may let it take one. */
  private jobsWaiting = true;
  /** Claims no more (finishing its jobs before it stops, or stopping). */
  private finishing = false;
  private stopping = false;
  /** Jobs it was asked to stop and is stopping: asked once. */
  private readonly cancelling = new Set<string>();
  /** Its one listening connection: cancels, browsing requests, queued jobs. */
  private listener: ChannelListener | null = null;
  /** Flushes of what the server is yet to be told, one after another (see send). */
  private outbox: Promise<void> = Promise.resolve();
  /** Output chunks not stored yet. */
  private readonly unsent: JobOutputRow[] = [];
  /** Changes not told yet: job ids, and `<jobId>:files` for stored file changes. */
  private readonly untold = new Set<string>();
  /** The last output chunk numbered of each job it runs. */
  private readonly outputSeq = new Map<string, number>();

  private constructor(
    readonly id: string,
    private readonly settings: RunnerSettings,
    private readonly handle: PgHandle,
    private readonly registry: Registry,
    readonly jobs: JobParts,
    private readonly files: FileWatcher,
    private readonly browsing: BrowsingRequests,
    private readonly onError: (what: string, err: unknown) => void,
  ) {}

  static async start(
    settings: RunnerSettings,
    onError: (what: string, err: unknown) => void,
    timings: RunnerTimings = { ...TIMINGS, claimMs: settings.claimPollMs ?? TIMINGS.claimMs },
  ): Promise<Runner> {
    const { config } = settings;
    // The server creates and upgrades the tables; a runner's login need not be allowed to.
    const handle = await openPgDb(settings.databaseUrl, { schema: "check", onError: (err) => onError("the registry's connection", err) });
    // Agents are the server's to change: read as they are now, never as this process last read them.
    const registry = createPgRegistry(handle, { cacheAgents: false });
    // New for every start: a runner that comes back after a crash is a new runner, never the one declared lost.
    const id = `${settings.hostname
      .toLowerCase()
      .replace(/[^a-z0-9.-]/g, "-")
      .slice(0, 40)}-${randomBytes(4).toString("hex")}`;
    try {
      await checkRunnerIdentity(handle, settings);
      // In the registry's transaction, which runs one at a time across processes: two machines
      // starting under one name at once cannot both pass the check.
      await registry.transaction(async (tx) => {
        const now = Date.now();
        refuseNameHeldElsewhere(await tx.runners.list(), settings, now);
        await tx.runners.register({
          id,
          name: settings.name,
          labels: settings.labels,
          hostname: settings.hostname,
          version: corralVersion(),
          startedAt: now,
          heartbeatAt: now,
          stoppedAt: null,
        });
      });
    } catch (err) {
      await registry.close().catch(() => {});
      throw err;
    }
    const fenced = fencedRegistry(registry, id);
    const costs = new CostService(fenced);
    // Stored estimates are the server's to reprice (a runner may change only its own jobs).
    await costs.start({ reprice: false });
    const files = new FileWatcher(fenced.jobFiles, [config.dataDir]);
    // Worktrees made by this machine's runner under this name, at this start or an earlier one.
    const madeHere = async (maker: string) => (await registry.runners.list()).some((r) => r.id === maker && r.name === settings.name);
    const jobs = createJobParts({
      config,
      registry: fenced,
      costs,
      audit: new AuditService(fenced.audit),
      inProcessAdapters: inProcessAdapters(config, fenced.jobMessages),
      // A worktree job's end commits what its worker left, on this machine where its worktree is.
      hooks: withWorktrees(
        fileHooks(files, config.dataDir),
        config.dataDir,
        (message) => onError("a worktree job's end", new Error(message)),
        async (wt) => wt.runner !== undefined && (await madeHere(wt.runner)),
      ),
      runnerId: id,
      worktreeHere: madeHere,
    });
    // The server's own policy on this machine: its roots, the registry's known workdirs, the same refusals.
    const workdirs = new WorkdirService({
      config,
      agents: { list: () => registry.agents.list() },
      files: { jobWorkdirs: () => registry.jobFiles.jobWorkdirs() },
    });
    const browsing = new BrowsingRequests(id, registry, workdirs, new WorktreeAnswers(registry, settings.name), onError);
    const runner = new Runner(id, settings, handle, registry, jobs, files, browsing, onError);
    // Listening before the first claim: a job queued in between is either claimed or heard of.
    // What it misses while this connection is down is found at its heartbeat (cancels, browsing
    // requests) and claim poll (queued jobs).
    runner.listener = await listen(
      settings.databaseUrl,
      {
        [CANCEL_CHANNEL]: (jobId) => runner.stopIfAsked(jobId),
        [REQUEST_CHANNEL]: (requestId) => browsing.heard(requestId),
        [QUEUE_CHANNEL]: (label) => {
          if (!settings.labels.includes(label)) return;
          runner.jobs.jobEngine.pumpQueues();
          runner.claim();
        },
      },
      (err) => onError("the connection that hears of cancels, browsing requests and queued jobs", err),
    );
    runner.begin(timings);
    return runner;
  }

  get labels(): string[] {
    return this.settings.labels;
  }

  private begin(timings: RunnerTimings): void {
    this.jobs.jobEvents.on("output", (event) => {
      const seq = (this.outputSeq.get(event.jobId) ?? 0) + 1;
      this.outputSeq.set(event.jobId, seq);
      this.unsent.push({ jobId: event.jobId, seq, stream: event.stream, data: event.data.toString("utf8"), at: Date.now() });
      this.send();
    });
    // Told as they are stored (the job page shows them live), once per job however many changed at once.
    this.files.on("file", ({ jobId }) => this.send(`${jobId}${FILES_CHANGED}`));
    this.jobs.jobEvents.on("job", (job) => {
      this.send(job.id);
      // A job that ended frees a slot of its agent: a job left waiting may be claimed now. (One
      // queued later is told of by QUEUE_CHANNEL, or found at the claim poll.)
      if (job.endedAt !== null && this.jobsWaiting) this.claim();
    });
    this.heartbeat = setInterval(() => {
      this.registry.runners.heartbeat(this.id, Date.now()).catch((err: unknown) => this.onError("a heartbeat", err));
      // A cancel whose NOTIFY was missed (the listening connection was down) is found here.
      for (const jobId of this.jobs.jobEngine.activeIds()) this.stopIfAsked(jobId);
      // So are browsing requests.
      this.browsing.catchUp().catch((err: unknown) => this.onError("looking for browsing requests", err));
    }, timings.heartbeatMs);
    this.poll = setInterval(() => {
      this.jobs.jobEngine.pumpQueues();
      this.claim();
    }, timings.claimMs);
    this.claim();
  }

  /** Claims jobs while there are some it may take, each started at once; one round at a time. */
  private claim(): void {
    if (this.finishing || this.stopping) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    this.claiming = true;
    void (async () => {
      try {
        do {
          this.claimAgain = false;
          for (;;) {
            if (this.finishing || this.stopping) return;
            // The server is told of the claim as it commits (runners.claim).
            const claim = await this.registry.transaction((tx) => tx.runners.claim(this.id, this.settings.labels));
            this.jobsWaiting = claim.waiting;
            if (claim.job) this.jobs.jobEngine.startClaimed(claim.job, claim.roomHere ?? 0);
            if (!claim.more) break;
          }
        } while (this.claimAgain);
      } catch (err) {
        this.jobsWaiting = true;
        this.onError("a claim", err);
      } finally {
        this.claiming = false;
      }
    })();
  }

  /** Stops job `jobId`'s worker if it runs here and a cancel was asked for it (stored by whoever asked). */
  private stopIfAsked(jobId: string): void {
    if (this.stopping || this.cancelling.has(jobId) || !this.jobs.jobEngine.activeIds().includes(jobId)) return;
    this.cancelling.add(jobId);
    void (async () => {
      try {
        const job = await this.jobs.jobs.find(jobId);
        if (!job?.cancel) return;
        await this.jobs.cancels.cancel(jobId);
      } catch (err) {
        this.onError(`cancelling job ${jobId}`, err);
      } finally {
        // cancel() resolves once the worker is gone; had it failed, the next heartbeat asks again.
        this.cancelling.delete(jobId);
      }
    })();
  }

  /**
   * Tells the server of a change (`payload`), or of output just added to `unsent`: a flush follows
   * every earlier one, so a job's output is stored before any later change of it is told, its end
   * among them, and the server has all of a job's output once it hears it ended.
   */
  private send(payload?: string): void {
    if (payload !== undefined) this.untold.add(payload);
    this.outbox = this.outbox.then(() => this.flush()).catch((err: unknown) => this.onError("sending to the registry", err));
  }

  /**
   * Stores every output chunk not sent yet (one insert), then tells each job's last chunk and
   * every change waiting (one NOTIFY statement): however many piled up while the last flush ran,
   * two statements at most. The server reads a job's state as it is when told, and copies all its
   * output stored by then, so changes told together need no order among them, and a job told
   * twice (running, then ended) is told once.
   */
  private async flush(): Promise<void> {
    const rows = this.unsent.splice(0);
    const changes = [...this.untold];
    this.untold.clear();
    if (rows.length) await this.registry.jobOutput.append(rows);
    const payloads = [...new Map(rows.map((row) => [row.jobId, `${row.jobId}:${row.seq}`])).values(), ...changes];
    if (!payloads.length) return;
    // Far below NOTIFY's 8000 bytes each: ids and numbers only.
    await this.handle.db.$client.query("select pg_notify($1, payload) from unnest($2::text[]) as payload", [JOB_CHANNEL, payloads]);
  }

  /**
   * Claims no more jobs and resolves once those it runs have ended and their ends are stored (a
   * runner taken down for maintenance loses no work). It still heartbeats and hears cancels.
   */
  async finishJobs(): Promise<void> {
    this.finishing = true;
    if (this.poll) clearInterval(this.poll);
    while (this.claiming || this.jobs.jobEngine.activeIds().length) await sleep(100);
    await this.outbox;
  }

  /**
   * Stops claiming, cancels the jobs it still runs (no other runner could follow their workers),
   * gives back those it claimed but had not started, and says it stopped.
   */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.poll) clearInterval(this.poll);
    await this.listener?.close();
    await this.browsing.settled();
    while (this.claiming) await sleep(10);
    await Promise.all(
      this.jobs.jobEngine.activeIds().map((id) => this.jobs.cancels.cancel(id).catch((err: unknown) => this.onError(`cancelling job ${id}`, err))),
    );
    this.jobs.jobEngine.shutdown();
    this.files.shutdown();
    await this.outbox;
    await this.registry.runners.releaseQueued(this.id);
    await this.registry.runners.markStopped(this.id, Date.now());
    await this.registry.close();
  }
}

/**
 * Refuses to start under a name a runner on another machine holds: one not stopped whose last
 * heartbeat is within the lease (CORRAL_RUNNER_LEASE_S, read by loadConfig as the server reads it).
 * The server asks a name's newest runner to browse its workdirs, so two machines under one name
 * would have one's workdirs read on the other. The same machine starting again after a crash is
 * not refused: its earlier runner, silent or not, has its hostname.
 */
function refuseNameHeldElsewhere(runners: RunnerRow[], settings: RunnerSettings, now: number): void {
  const leaseMs = settings.config.runnerLeaseMs;
  const holder = runners
    .filter((r) => r.name === settings.name && r.hostname !== settings.hostname && r.stoppedAt === null && now - r.heartbeatAt <= leaseMs)
    .sort((a, b) => b.heartbeatAt - a.heartbeatAt)[0];
  if (!holder) return;
  const ago = Math.max(0, Math.round((now - holder.heartbeatAt) / 1000));
  const freeIn = Math.max(1, Math.ceil((holder.heartbeatAt + leaseMs - now) / 1000));
  throw new ConfigError(
    `CORRAL_RUNNER_NAME: "${settings.name}" is taken by a runner on host ${holder.hostname} (${holder.id}, last heartbeat ${ago} s ago, within the lease of ${leaseMs / 1000} s); two machines under one name would have one's workdirs browsed on the other. Give this machine (${settings.hostname}) another CORRAL_RUNNER_NAME, or stop the runner on ${holder.hostname}; if it is gone, the name is free once its lease runs out, in ${freeIn} s.`,
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
