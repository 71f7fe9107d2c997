import type { Dialect } from "../dialect.js";
import type { Repos } from "../registry.js";
import { type AgentRowCache, createAgentsRepo } from "./agents.js";
import { createAuditRepo } from "./audit.js";
import { createConversationsRepo } from "./conversations.js";
import { createCostsRepo } from "./costs.js";
import { createJobFilesRepo } from "./job-files.js";
import { createJobMessagesRepo } from "./job-messages.js";
import { createJobOutputRepo } from "./job-output.js";
import { createJobStatsRepo } from "./job-stats.js";
import { createJobsRepo } from "./jobs.js";
import { createMcpTasksRepo } from "./mcp-tasks.js";
import { createOllamaModelsRepo } from "./ollama-models.js";
import { createRunnerRequestsRepo } from "./runner-requests.js";
import { createRunnersRepo } from "./runners.js";
import { createSessionsRepo } from "./sessions.js";

/** Every repository on one dialect; `agentRows` is shared by a registry's dialects (null: agents read every time). */
export function createRepos(dialect: Dialect, agentRows: AgentRowCache | null): Repos {
  return {
    agents: createAgentsRepo(dialect, agentRows),
    jobs: createJobsRepo(dialect),
    jobFiles: createJobFilesRepo(dialect),
    jobMessages: createJobMessagesRepo(dialect),
    jobStats: createJobStatsRepo(dialect),
    costs: createCostsRepo(dialect),
    audit: createAuditRepo(dialect),
    sessions: createSessionsRepo(dialect),
    ollamaModels: createOllamaModelsRepo(dialect),
    mcpTasks: createMcpTasksRepo(dialect),
    conversations: createConversationsRepo(dialect),
    runners: createRunnersRepo(dialect),
    jobOutput: createJobOutputRepo(dialect),
    runnerRequests: createRunnerRequestsRepo(dialect),
  };
}
