import path from "node:path";
import type { AppConfig } from "./config.js";
import { AgentService } from "./agents/service.js";
import { OllamaService } from "./agents/ollama/service.js";
import { inProcessAdapters } from "./agents/registry.js";
import { ConfigFileService } from "./config-file/service.js";
import { ConversationHub } from "./conversations/hub.js";
import { CostService } from "./costs/service.js";
import { transactor, type Db } from "./db/client.js";
import { createCostsRepo } from "./db/repos/costs.js";
import { createAgentsRepo } from "./db/repos/agents.js";
import { createAuditRepo } from "./db/repos/audit.js";
import { createConversationsRepo } from "./db/repos/conversations.js";
import { createJobStatsRepo } from "./db/repos/job-stats.js";
import { createJobFilesRepo } from "./db/repos/job-files.js";
import { createJobMessagesRepo } from "./db/repos/job-messages.js";
import { createJobsRepo } from "./db/repos/jobs.js";
import { createMcpTasksRepo, type McpTasksRepo } from "./db/repos/mcp-tasks.js";
import { createOllamaModelsRepo } from "./db/repos/ollama-models.js";
import { createSessionsRepo } from "./db/repos/sessions.js";
import { FileWatcher } from "./jobs/file-watcher.js";
import { JobService } from "./jobs/service.js";
import { jobDataPaths } from "./jobs/worker-process.js";
import { AuditService } from "./audit/service.js";
import { Metrics } from "./observability/metrics.js";
import { SessionService } from "./security/sessions.js";
import { WorkdirService } from "./workdirs/service.js";

/** The one service layer every door (MCP, REST, WebSocket) calls. */
export interface Services {
  config: AppConfig;
  agents: AgentService;
  jobs: JobService;
  /** Prices, budgets and the cost report. */
  costs: CostService;
  /** What each job did to its workdir. */
  files: FileWatcher;
  /** Which workdirs may be browsed, and reading inside them. */
  workdirs: WorkdirService;
  ollama: OllamaService;
  /** Who launched and cancelled what. */
  audit: AuditService;
  /** Prometheus samples for /metrics. */
  metrics: Metrics;
  /** Signed-in browsers. */
  sessions: SessionService;
  /** MCP tasks and the jobs behind them; only mcp/tasks reads and writes them. */
  mcpTasks: McpTasksRepo;
  /** Agents that message each other in conversation sessions. */
  conversations: ConversationHub;
  /** Agents, budgets and prices declared in CORRAL_CONFIG. */
  configFile: ConfigFileService;
}

export function createServices(config: AppConfig, db: Db): Services {
  const agentsRepo = createAgentsRepo(db);
  const jobsRepo = createJobsRepo(db);
  const jobMessages = createJobMessagesRepo(db);
  const costs = new CostService({ costs: createCostsRepo(db), agents: agentsRepo });
  const agents = new AgentService({ config, agents: agentsRepo, hasJobs: (name) => jobsRepo.hasJobs(name) });
  const audit = new AuditService(createAuditRepo(db));
  const files = new FileWatcher(createJobFilesRepo(db), [config.dataDir]);
  const snapshotFile = (jobId: string) => path.join(jobDataPaths(config.dataDir, jobId).dir, "workdir-before.json");
  const jobs = new JobService({
    config,
    jobs: jobsRepo,
    agents: agentsRepo,
    costs,
    audit,
    transact: transactor(db),
    conversations: jobMessages,
    inProcessAdapters: inProcessAdapters(config, jobMessages),
    hooks: {
      starting: (row) => files.begin(row.id, row.workdir, snapshotFile(row.id)),
      resumed: (row) => void files.resume(row.id, row.workdir, snapshotFile(row.id)),
      ended: (row, ran) => files.end(row.id, ran),
    },
  });
  const ollama = new OllamaService({ config, agents: agentsRepo, models: createOllamaModelsRepo(db) });
  agents.on("changed", ({ name, removed }) => {
    if (!removed) jobs.agentChanged(name);
  });
  const workdirs = new WorkdirService({ config, agents, files });
  const metrics = new Metrics(jobs, createJobStatsRepo(db));
  const sessions = new SessionService(createSessionsRepo(db), config.dataDir, config.sessionTtlMs);
  const conversations = new ConversationHub({ repo: createConversationsRepo(db), agents, jobs, transact: transactor(db) });
  const configFile = new ConfigFileService({ config, agents, costs });
  const mcpTasks = createMcpTasksRepo(db);
  return { config, agents, jobs, costs, files, workdirs, ollama, audit, metrics, sessions, conversations, configFile, mcpTasks };
}
