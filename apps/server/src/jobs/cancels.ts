import { isFinalStatus, type Job } from "@corral/shared";
import type { Actor } from "../audit/service.js";
import type { JobRow } from "../db/schema.js";
import { notFound } from "../lib/errors.js";
import type { JobDeps } from "./deps.js";
import type { JobDriver } from "./driver.js";
import type { JobStore } from "./job-store.js";
import type { JobQueries } from "./queries.js";
import type { Scheduler } from "./scheduler.js";
import type { JobWaits } from "./waits.js";

/**
 * How long a cancel waits for a runner to report its worker gone, beyond the kill grace period:
 * the runner hears at once (NOTIFY) or at its next heartbeat (2 s).
 */
const REMOTE_STOP_MS = 5000;

/** Cancels from every door, of a job queued, waiting to retry, running here or on a runner. */
export class JobCancels {
  constructor(
    private readonly deps: Pick<JobDeps, "config" | "registry" | "runnerId">,
    private readonly store: JobStore,
    private readonly scheduler: Pick<Scheduler, "remove">,
    private readonly driver: Pick<JobDriver, "cancelRetry" | "stop">,
    private readonly jobs: Pick<JobQueries, "get">,
    private readonly waits: JobWaits,
  ) {}

  /** Resolves once the job has ended (a queued job ends at once). */
  async cancel(id: string, actor?: Actor): Promise<Job> {
    // A job that never started ends here, in the transaction of its audit entry; a running one
    // ends once its worker is gone, so only the request is stored with the entry. The first
    // request is the one the job keeps (who and when, for its timeline); a restart honours it.
    // Read in the same transaction: a start that stores the job running cannot come in between.
    const ended = await this.store.atomically(async (unit) => {
      const row = await unit.tx.jobs.get(id);
      if (!row) throw notFound(`job ${id} not found`, "job_id");
      if (isFinalStatus(row.status)) return true;
      if (actor) await this.store.audit(unit, "cancel", row, actor);
      if (row.cancelRequestedAt === null) {
        await this.store.update(
          id,
          { cancelRequestedAt: Date.now(), cancelledBy: actor?.door ?? "server", cancelClient: actor?.client ?? null },
          unit,
        );
      }
      if (await this.driver.cancelRetry(row, unit)) return true;
      if (row.status !== "queued") {
        // Another process's worker (a runner's): it is told, and stops it when this commits.
        if (!this.runsHere(row)) {
          await unit.tx.runners.askToStop(id);
          return "elsewhere";
        }
        return false;
      }
      await this.store.finish(id, { status: "cancelled", error: "cancelled before it started" }, unit);
      unit.afterCommit(() => this.scheduler.remove(row.agent, id));
      return true;
    });
    if (ended === "elsewhere") await this.waits.waitFor([id], this.deps.config.killGraceMs + REMOTE_STOP_MS);
    else if (!ended) await this.driver.stop(id, "cancelled", "cancelled");
    return this.jobs.get(id);
  }

  /**
   * Cancels every queued and running job this process runs (the server stops and was asked to
   * take its workers along). Runners' jobs, and jobs waiting for a runner, are theirs: left alone.
   */
  async cancelAll(): Promise<void> {
    const open = await this.deps.registry.jobs.withStatus(["queued", "running"]);
    await Promise.all(open.filter((row) => this.runsHere(row)).map((row) => this.cancel(row.id)));
  }

  /** Whether this process runs the job: the job is its runner's (the server's are `local`'s). */
  private runsHere(row: JobRow): boolean {
    return row.runner === this.deps.runnerId;
  }
}
