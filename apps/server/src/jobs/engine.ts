import { LOCAL_RUNNER } from "@corral/shared";
import { registryUnreachable } from "../db/registry-error.js";
import type { JobRow } from "../db/schema.js";
import type { JobDeps } from "./deps.js";
import { JobDriver } from "./driver.js";
import type { JobStore } from "./job-store.js";
import { Scheduler } from "./scheduler.js";

/** How soon an agent's change is read again when the registry could not be reached. */
const AGENT_CHANGE_RETRY_MS = 1000;

/**
 * The jobs this process runs: its queues (the scheduler decides when each may start), the driver
 * that takes each from there to its end, and their life with the process's (recovery at boot,
 * shutdown, agents' changes, a runner's claims).
 */
export class JobEngine {
  readonly scheduler: Scheduler;
  readonly driver: JobDriver;
  private recoveredAlready = false;

  constructor(
    private readonly deps: JobDeps,
    private readonly store: JobStore,
  ) {
    this.scheduler = new Scheduler(
      (agent) => this.limitHere(agent),
      (agent, jobId) => void this.driver.start(agent, jobId),
      deps.config.queueLimit,
    );
    this.driver = new JobDriver(deps, store, this.scheduler);
  }

  /** Set once recovery has queued local's jobs: the lease sweep takes strays only after it (never queued twice). */
  get recovered(): boolean {
    return this.recoveredAlready;
  }

  /**
   * How many of the agent's jobs this process may run at once: its maxConcurrent less the jobs
   * other runners hold, so the limit holds across the server and every runner (a runner's claim
   * counts the others' the same way).
   */
  private async limitHere(name: string): Promise<number> {
    const agent = await this.deps.registry.agents.get(name);
    if (!agent) return 1;
    return agent.maxConcurrent - (await this.deps.registry.runners.heldElsewhere(name, this.deps.runnerId));
  }

  queuedCount(): number {
    return this.scheduler.queuedCount();
  }

  /**
   * A runner's job, claimed from the registry (runners.claim): it starts here as a launch's would.
   * The claim counted its agent's jobs on every runner and found room (`roomHere`: the limit here
   * as it counted it), so the limit is not read again (Scheduler.startCounted).
   */
  startClaimed(row: JobRow, roomHere: number): void {
    if (!this.runsHere(row)) throw new Error(`job ${row.id} is not claimed by this runner`);
    this.scheduler.startCounted(row.agent, row.id, roomHere);
  }

  /** Jobs this process runs now (started and not yet ended). */
  activeIds(): string[] {
    return this.driver.activeIds();
  }

  /**
   * An agent changed: start what its limit now allows. Its waiting jobs follow its runner label:
   * a label removed, the server takes those that waited for a runner; a label given, the server
   * gives those waiting here to the runners (one that starts meanwhile is given back by
   * admission, see JobDriver.admit).
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
    const agent = await this.deps.registry.agents.get(name);
    if (!agent) return;
    if (agent.runnerLabel === null) {
      for (const row of await this.deps.registry.runners.takeQueued(LOCAL_RUNNER, name)) {
        this.store.announce(row);
        if (!this.scheduler.holds(name, row.id)) this.scheduler.enqueue(name, row.id);
      }
      return;
    }
    // PostgreSQL tells the runners with its label (releaseQueued); one starting here meanwhile is refused by admission.
    for (const row of await this.deps.registry.runners.releaseQueued(LOCAL_RUNNER, name)) {
      this.scheduler.remove(name, row.id);
      this.store.announce(row);
    }
  }

  /**
   * At boot: queued jobs wait again in order; running ones are picked up where they are. A job
   * that cannot be recovered ends `lost` with the reason; it never keeps the server from starting.
   */
  async recover(): Promise<void> {
    // Queued jobs no runner holds of agents without a label (one removed while the server was down) are local's.
    await this.deps.registry.runners.takeQueued(this.deps.runnerId);
    for (const found of await this.deps.registry.jobs.withStatus(["queued", "running"])) {
      // Runners claim only queued jobs: a running one no runner holds was written by an older version or by hand, and is the server's.
      const row = found.status === "running" && found.runner === null ? await this.store.update(found.id, { runner: this.deps.runnerId }) : found;
      // A runner's job is its runner's to follow, and one waiting for a runner is left to them.
      // (A job of an agent given a runner label while the server was down is given to them as it is admitted.)
      if (!this.runsHere(row)) continue;
      try {
        if (row.status === "queued") this.scheduler.enqueue(row.agent, row.id);
        else await this.driver.reattach(row);
      } catch (err) {
        await this.driver.lose(row, `the server could not recover this job at start: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    // Once the start's own writes are done (a start on a full disk had the reserve for them), and
    // before any output is copied: what there is room for is set aside again.
    this.store.space.hold();
    this.recoveredAlready = true;
  }

  /** Stops following workers and leaves them running; the next start picks them up. */
  shutdown(): void {
    this.scheduler.close();
    this.driver.shutdown();
  }

  /** Whether this process runs the job: the job is its runner's (the server's are `local`'s). */
  private runsHere(row: JobRow): boolean {
    return row.runner === this.deps.runnerId;
  }
}
