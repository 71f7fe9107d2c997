import type { Async } from "./async.js";
import type { DbHandle } from "./client.js";
import { createAgentsRepo } from "./repos/agents.js";
import { createAuditRepo } from "./repos/audit.js";
import { createConversationsRepo } from "./repos/conversations.js";
import { createCostsRepo } from "./repos/costs.js";
import { createJobFilesRepo } from "./repos/job-files.js";
import { createJobMessagesRepo } from "./repos/job-messages.js";
import { createJobOutputRepo } from "./repos/job-output.js";
import { createJobStatsRepo } from "./repos/job-stats.js";
import { createJobsRepo } from "./repos/jobs.js";
import { createMcpTasksRepo } from "./repos/mcp-tasks.js";
import { createOllamaModelsRepo } from "./repos/ollama-models.js";
import { createRunnerRequestsRepo } from "./repos/runner-requests.js";
import { createRunnersRepo } from "./repos/runners.js";
import { createSessionsRepo } from "./repos/sessions.js";

// Each repository as every dialect serves it: the SQLite repository's methods, answering Promises.
export type AgentsRepo = Async<ReturnType<typeof createAgentsRepo>>;
export type JobsRepo = Async<ReturnType<typeof createJobsRepo>>;
export type JobFilesRepo = Async<ReturnType<typeof createJobFilesRepo>>;
export type JobMessagesRepo = Async<ReturnType<typeof createJobMessagesRepo>>;
export type JobStatsRepo = Async<ReturnType<typeof createJobStatsRepo>>;
export type CostsRepo = Async<ReturnType<typeof createCostsRepo>>;
export type AuditRepo = Async<ReturnType<typeof createAuditRepo>>;
export type SessionsRepo = Async<ReturnType<typeof createSessionsRepo>>;
export type OllamaModelsRepo = Async<ReturnType<typeof createOllamaModelsRepo>>;
export type McpTasksRepo = Async<ReturnType<typeof createMcpTasksRepo>>;
export type ConversationsRepo = Async<ReturnType<typeof createConversationsRepo>>;
export type RunnersRepo = Async<ReturnType<typeof createRunnersRepo>>;
export type JobOutputRepo = Async<ReturnType<typeof createJobOutputRepo>>;
export type RunnerRequestsRepo = Async<ReturnType<typeof createRunnerRequestsRepo>>;

export interface Repos {
  agents: AgentsRepo;
  jobs: JobsRepo;
  jobFiles: JobFilesRepo;
  jobMessages: JobMessagesRepo;
  jobStats: JobStatsRepo;
  costs: CostsRepo;
  audit: AuditRepo;
  sessions: SessionsRepo;
  ollamaModels: OllamaModelsRepo;
  mcpTasks: McpTasksRepo;
  conversations: ConversationsRepo;
  runners: RunnersRepo;
  jobOutput: JobOutputRepo;
  runnerRequests: RunnerRequestsRepo;
}

/** The registry, whichever database holds it. */
export interface Registry extends Repos {
  /**
   * Runs `fn` in one transaction: all of its writes are stored, or none (it rolls back when `fn`
   * throws). Only calls through `tx` belong to it; a call through the registry itself is never
   * part of it (with SQLite it waits until the transaction has ended, so `fn` must not wait for one).
   */
  transaction<T>(fn: (tx: Repos) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  readonly dialect: "sqlite" | "postgres";
  /** PostgreSQL: what a call that gave up waiting for a lock (55P03) says, naming who holds it. */
  describeLockWait?(): Promise<string>;
}

type Statements = { [K in keyof Repos]: object };

/**
 * The SQLite registry: the synchronous repositories behind Promises. One connection serves
 * everything, so a transaction is a gate: while one is open, calls from outside it wait until it
 * has ended and transactions run one at a time; with none open a call costs only its `await`.
 */
export function createSqliteRegistry(handle: DbHandle): Registry {
  const { db } = handle;
  const sync: Statements = {
    agents: createAgentsRepo(db),
    jobs: createJobsRepo(db),
    jobFiles: createJobFilesRepo(db),
    jobMessages: createJobMessagesRepo(db),
    jobStats: createJobStatsRepo(db),
    costs: createCostsRepo(db),
    audit: createAuditRepo(db),
    sessions: createSessionsRepo(db),
    ollamaModels: createOllamaModelsRepo(db),
    mcpTasks: createMcpTasksRepo(db),
    conversations: createConversationsRepo(db),
    runners: createRunnersRepo(db),
    jobOutput: createJobOutputRepo(db),
    runnerRequests: createRunnerRequestsRepo(db),
  };
  /** Settles when the open transaction has ended; null when none is open. */
  let open: Promise<void> | null = null;
  const outside = reposOf(sync, async (call) => {
    while (open) await open;
    return call();
  });
  const Inside = insideRepos(sync);
  // Prepared once, as better-sqlite3's own transactions are.
  const begin = db.$client.prepare("begin immediate");
  const commit = db.$client.prepare("commit");
  const rollback = db.$client.prepare("rollback");

  return {
    ...outside,
    dialect: "sqlite",
    async transaction(fn) {
      while (open) await open;
      let ended = false;
      let end = () => {};
      open = new Promise((resolve) => {
        end = resolve;
      });
      const inside = new Inside(async (call) => {
        if (ended) throw new Error("a registry call through a transaction that has ended");
        return call();
      });
      try {
        begin.run();
        const result = await fn(inside);
        commit.run();
        return result;
      } catch (err) {
        if (db.$client.inTransaction) rollback.run();
        throw err;
      } finally {
        ended = true;
        open = null;
        end();
      }
    },
    async close() {
      while (open) await open;
      handle.close();
    },
  };
}

type Run = (call: () => unknown) => Promise<unknown>;

/** Every method of one repository, called through `run`. */
function repoOf(repo: object, run: Run): Record<string, unknown> {
  const wrapped: Record<string, unknown> = {};
  for (const [method, value] of Object.entries(repo)) {
    wrapped[method] = typeof value === "function" ? (...args: unknown[]) => run(() => value(...args)) : value;
  }
  return wrapped;
}

/** Every method of every repository, called through `run`. */
function reposOf(sync: Statements, run: Run): Repos {
  return Object.fromEntries(Object.entries(sync).map(([name, repo]) => [name, repoOf(repo, run)])) as unknown as Repos;
}

/**
 * The repositories as one transaction sees them. A transaction uses a few of them, so each is
 * wrapped when it is first used rather than all of them for every transaction.
 */
function insideRepos(sync: Statements): new (run: Run) => Repos {
  class Inside {
    readonly wrapped = new Map<string, Record<string, unknown>>();
    constructor(readonly run: Run) {}
  }
  for (const [name, repo] of Object.entries(sync)) {
    Object.defineProperty(Inside.prototype, name, {
      get(this: Inside) {
        let wrapped = this.wrapped.get(name);
        if (!wrapped) {
          wrapped = repoOf(repo, this.run);
          this.wrapped.set(name, wrapped);
        }
        return wrapped;
      },
    });
  }
  return Inside as unknown as new (
    run: Run,
  ) => Repos;
}
