import type { InProcessAdapter } from "../agents/types.js";
import type { AuditService } from "../audit/service.js";
import type { AppConfig } from "../config.js";
import type { JobCostPolicy } from "../costs/service.js";
import type { Registry } from "../db/registry.js";
import type { JobRow } from "../db/schema.js";

/** What the job engine is built from (createJobParts): the server and a `corral runner` each give their own. */
export interface JobDeps {
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
   * The runner (runners.id) this process runs jobs for: it starts only jobs that runner holds.
   * The server is the runner `local` (LOCAL_RUNNER): it holds its agents' jobs from their launch,
   * where a `corral runner` claims its own from the registry.
   */
  runnerId: string;
  /**
   * Whether a worktree a runner made (its `runner` set) is on this machine: a `corral runner`
   * says yes for its own name's. A job whose worktree is elsewhere is never run here. Default:
   * only worktrees without a runner are.
   */
  worktreeHere?: (runner: string) => Promise<boolean>;
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
