import { isFinalStatus, type Job, LOCAL_RUNNER } from "@corral/shared";
import type { Registry } from "../../db/registry.js";
import type { JobDeps } from "../deps.js";
import type { JobStore } from "../job-store.js";
import type { Scheduler } from "../scheduler.js";
import type { RunnerOutputCopy } from "./output-copy.js";

/**
 * The jobs remote runners (`corral runner`) hold, as this process follows them: what a runner
 * NOTIFYs is read back and told as this process's own changes are, its output copied into this
 * server's log of the job, and a runner silent past its lease loses its running jobs.
 */
export class RemoteJobs {
  constructor(
    private readonly deps: Pick<JobDeps, "registry" | "runnerId">,
    private readonly store: JobStore,
    private readonly scheduler: Pick<Scheduler, "pump" | "holds" | "enqueue">,
    private readonly outputCopy: RunnerOutputCopy,
    /** Whether recovery has queued local's jobs: the lease sweep takes strays only after it (never queued twice). */
    private readonly recovered: () => boolean,
  ) {}

  private get registry(): Registry {
    return this.deps.registry;
  }

  /**
   * A runner's job: what it stored that this server has not copied yet (stored while the server
   * was down, or not yet heard of) is copied before the log is read. A job run here has nothing to copy.
   */
  async caughtUp(job: Job): Promise<void> {
    if (job.runner !== null && job.runner !== this.deps.runnerId) await this.outputCopy.copy(job.id);
  }

  /**
   * What a runner NOTIFYs (JOB_CHANNEL): `<jobId>` after a change to the job, `<jobId>:<seq>` after
   * output chunks up to seq. The job's stored state is announced as this process's own changes
   * are (waits, the WebSocket and MCP tasks hear of it); output is copied into this server's log
   * of the job first, so a job told ended has all its output there. Called in the order heard.
   * Returns "ended" for a runner's job told ended, "told" for another told of a job for runners
   * (see forRunners), null for one ignored: a NOTIFY about this server's own.
   */
  async heardFromRunner(payload: string): Promise<"told" | "ended" | null> {
    const [id = "", seq] = payload.split(":");
    if (!id) return null;
    const row = await this.registry.jobs.get(id);
    if (!row) return null;
    // Any login may NOTIFY, so a payload is only a hint: output is copied only for a job a runner
    // holds (the registry lets a runner store output only for its own), never into a log this
    // server writes itself.
    if (row.runner === this.deps.runnerId) return null;
    const ended = isFinalStatus(row.status);
    // Output as it is told, and all of it once the job ended; a change in between (claimed,
    // running) brings none to copy, and a reader catches up before it reads (caughtUp).
    if (row.runner !== null && (seq !== undefined || ended)) await this.outputCopy.copy(id);
    if (seq !== undefined) return "told";
    if (ended) {
      this.outputCopy.forget(id);
      // A slot of its agent is free across machines: a job waiting here may start.
      this.scheduler.pump(row.agent);
    }
    this.store.announce(row);
    return ended ? "ended" : "told";
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
    return this.store.atomically(async (unit) => {
      // The server's own runner is never silent while the server runs this; its jobs are followed again at its start.
      const silent = (await unit.tx.runners.list()).filter((r) => r.id !== LOCAL_RUNNER && r.stoppedAt === null && r.heartbeatAt < now - leaseMs);
      const running = silent.length ? await unit.tx.jobs.withStatus(["running"]) : [];
      let lost = 0;
      for (const runner of silent) {
        await unit.tx.runners.releaseQueued(runner.id);
        for (const row of running.filter((j) => j.runner === runner.id)) {
          const error = `runner ${runner.name} (${runner.id}) fell silent: no heartbeat for ${Math.round((now - runner.heartbeatAt) / 1000)} s, past its lease of ${Math.round(leaseMs / 1000)} s; its worker may still run there, but nothing it does is recorded any more`;
          await unit.tx.jobs.endAttempt(row.id, row.attempt, { status: "lost", error, endedAt: now });
          await this.store.finish(row.id, { status: "lost", error }, unit);
          unit.afterCommit(() => this.scheduler.pump(row.agent));
          lost++;
        }
      }
      // Jobs given back (here, or by a runner that stopped) of agents whose label was removed while a
      // runner held them (for a retry): no runner claims them, so they are local's, as a label removed
      // gives local the waiting ones. After recovery, which takes them at start.
      const left = this.deps.runnerId === LOCAL_RUNNER && this.recovered() ? await unit.tx.runners.takeQueued(LOCAL_RUNNER) : [];
      for (const row of left) {
        this.store.announce(row, unit);
        unit.afterCommit(() => {
          if (!this.scheduler.holds(row.agent, row.id)) this.scheduler.enqueue(row.agent, row.id);
        });
      }
      return lost;
    });
  }
}
