import os from "node:os";
import { LOCAL_RUNNER, type Runner, type RunnerList } from "@corral/shared";
import type { Registry } from "../db/registry.js";
import type { RunnerRow } from "../db/schema.js";
import { corralVersion } from "../lib/version.js";

/** The runners the registry knows, as the panel and GET /api/runners show them. */
export class RunnerDirectory {
  constructor(
    private readonly registry: Pick<Registry, "runners" | "jobs" | "dialect">,
    private readonly leaseMs: number,
  ) {}

  /**
   * The server announces itself as the runner `local` at each start: its row says which machine
   * and version run the server's jobs, and since when.
   */
  async registerLocal(now = Date.now()): Promise<void> {
    await this.registry.runners.registerLocal({
      id: LOCAL_RUNNER,
      name: LOCAL_RUNNER,
      labels: [],
      hostname: os.hostname(),
      version: corralVersion(),
      startedAt: now,
      heartbeatAt: now,
      stoppedAt: null,
    });
  }

  /** `local` first, then the `corral runner`s newest first: a machine's runner of today above the ones it ran last week. */
  async list(now = Date.now()): Promise<RunnerList> {
    const rows = await this.registry.runners.list();
    const held = new Map<string, number>();
    for (const job of await this.registry.jobs.withStatus(["queued", "running"])) {
      if (job.runner !== null) held.set(job.runner, (held.get(job.runner) ?? 0) + 1);
    }
    const runners = rows.map((row) => this.toRunner(row, held.get(row.id) ?? 0, now)).reverse();
    return {
      runners: [...runners.filter((r) => r.id === LOCAL_RUNNER), ...runners.filter((r) => r.id !== LOCAL_RUNNER)],
      multiMachine: this.registry.dialect === "postgres",
    };
  }

  private toRunner(row: RunnerRow, activeJobs: number, now: number): Runner {
    // The server does not heartbeat to itself: it runs `local`'s jobs for as long as it answers this.
    if (row.id === LOCAL_RUNNER) return { ...row, heartbeatAt: now, stoppedAt: null, state: "running", activeJobs };
    const state = row.stoppedAt !== null ? "stopped" : now - row.heartbeatAt > this.leaseMs ? "silent" : "running";
    return { ...row, state, activeJobs };
  }
}
