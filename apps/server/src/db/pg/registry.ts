import type { Registry, Repos } from "../registry.js";
import type { PgExecutor, PgHandle } from "./client.js";
import { AgentRowCache, createPgAgentsRepo } from "./repos/agents.js";
import { createPgAuditRepo } from "./repos/audit.js";
import { createPgConversationsRepo } from "./repos/conversations.js";
import { createPgCostsRepo } from "./repos/costs.js";
import { createPgJobFilesRepo } from "./repos/job-files.js";
import { createPgJobMessagesRepo } from "./repos/job-messages.js";
import { createPgJobStatsRepo } from "./repos/job-stats.js";
import { createPgJobsRepo } from "./repos/jobs.js";
import { createPgMcpTasksRepo } from "./repos/mcp-tasks.js";
import { createPgOllamaModelsRepo } from "./repos/ollama-models.js";
import { createPgSessionsRepo } from "./repos/sessions.js";

function reposOn(db: PgExecutor, agentRows: AgentRowCache): Repos {
  return {
    agents: createPgAgentsRepo(db, agentRows),
    jobs: createPgJobsRepo(db),
    jobFiles: createPgJobFilesRepo(db),
    jobMessages: createPgJobMessagesRepo(db),
    jobStats: createPgJobStatsRepo(db),
    costs: createPgCostsRepo(db),
    audit: createPgAuditRepo(db),
    sessions: createPgSessionsRepo(db),
    ollamaModels: createPgOllamaModelsRepo(db),
    mcpTasks: createPgMcpTasksRepo(db),
    conversations: createPgConversationsRepo(db),
  };
}

/**
 * The registry in PostgreSQL (CORRAL_DATABASE_URL). Calls outside a transaction take any pooled
 * connection; a transaction holds one connection of its own, and its repositories are built on it,
 * so nothing else joins it and it never waits for other calls.
 */
export function createPgRegistry(handle: PgHandle): Registry {
  const agentRows = new AgentRowCache();
  return {
    ...reposOn(handle.db, agentRows),
    dialect: "postgres",
    async transaction(fn) {
      try {
        return await handle.db.transaction((tx) => fn(reposOn(tx, agentRows)));
      } finally {
        // What the pool read while the transaction was open is the old row: read it again.
        agentRows.forget();
      }
    },
    close: () => handle.close(),
  };
}
