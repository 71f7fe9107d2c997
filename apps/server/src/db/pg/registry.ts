import { sql } from "drizzle-orm";
import { postgresDialect } from "../dialects/postgres.js";
import type { Registry } from "../registry.js";
import { AgentRowCache } from "../repos/agents.js";
import { createRepos } from "../repos/create-repos.js";
import type { PgHandle } from "./client.js";
import { TRANSACTIONS } from "./in-order.js";
import { lockHolders, lockWaitMessage } from "./lock-wait.js";

export interface PgRegistryOptions {
  /**
   * Keep the agent rows read (AgentRowCache; default true). Right only in the process that writes
   * agents, the server: it forgets them at each of its writes. A runner never writes agents, so a
   * cache there would hold the server's old rows until one of its own transactions happened to
   * forget them; it reads them every time instead, a lookup by primary key a few times per job.
   * (Forgetting them on a NOTIFY from the server would save those lookups but not be right: a
   * notification sent while the listening connection is down is never heard.)
   */
  cacheAgents?: boolean;
}

/**
 * The registry in PostgreSQL (CORRAL_DATABASE_URL). Calls outside a transaction take any pooled
 * connection and run at once. Transactions run one at a time, as SQLite's do: each reads what it
 * checks and writes what follows from it (a job still queued is started, a workdir still free gets
 * the job), which at PostgreSQL's READ COMMITTED a transaction running beside it could change in
 * between. In this process they queue before taking a connection, so waiting transactions never
 * hold the pool; across processes each holds an advisory lock until it ends.
 */
export function createPgRegistry(handle: PgHandle, { cacheAgents = true }: PgRegistryOptions = {}): Registry {
  const agentRows = cacheAgents ? new AgentRowCache() : null;
  /** Settles when the last transaction queued has ended. */
  let queue: Promise<unknown> = Promise.resolve();
  return {
    ...createRepos(postgresDialect(handle.db), agentRows),
    dialect: "postgres",
    async transaction(fn) {
      const turn = queue.then(() =>
        handle.db.transaction(async (tx) => {
          await tx.execute(sql`select pg_advisory_xact_lock(${TRANSACTIONS})`);
          return fn(createRepos(postgresDialect(tx), agentRows));
        }),
      );
      queue = turn.catch(() => undefined);
      try {
        return await turn;
      } finally {
        // What the pool read while the transaction was open is the old row: read it again.
        agentRows?.forget();
      }
    },
    async describeLockWait() {
      const holders = await lockHolders(handle.db.$client).catch(() => []);
      return lockWaitMessage(handle.lockTimeoutMs, holders);
    },
    async close() {
      await queue;
      await handle.close();
    },
  };
}
