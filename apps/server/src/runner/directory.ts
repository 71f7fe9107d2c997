import type { Runner, RunnerList } from "@corral/shared";
import type { Registry } from "../db/registry.js";
import type { RunnerRow } from "../db/schema.js";

/** The runners the registry knows, as the panel and GET /api/runners show them. */
export class RunnerDirectory {
  constructor(
    private readonly registry: Pick<Registry, "runners" | "jobs">,
    private readonly leaseMs: number,
  ) {}

  async list(now = Date.now()): Promise<RunnerList> {
    const rows = await this.registry.runners.list();
    if (!rows.length) return { runners: [] };
    const held = new Map<string, number>();
    for (const job of await this.registry.jobs.withStatus(["queued", "running"])) {
      if (job.runner !== null) held.set(job.runner, (held.get(job.runner) ?? 0) + 1);
    }
    // Newest first: a machine's runner of today above the ones it ran last week.
    return { runners: rows.map((row) => this.toRunner(row, held.get(row.id) ?? 0, now)).reverse() };
  }

  private toRunner(row: RunnerRow, activeJobs: number, now: number): Runner {
    const state = row.stoppedAt !== null ? "stopped" : now - row.heartbeatAt > this.leaseMs ? "silent" : "running";
    return { ...row, state, activeJobs };
  }
}
