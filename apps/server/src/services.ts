import { LOCAL_RUNNER } from "@corral/shared";
import type { AppConfig } from "./config.js";
import { AgentService } from "./agents/service.js";
import { OllamaService } from "./agents/ollama/service.js";
import { inProcessAdapters } from "./agents/kind-lookup.js";
import { ConfigFileService } from "./config-file/service.js";
import { ConversationHub } from "./conversations/hub.js";
import { CostService } from "./costs/service.js";
import type { McpTasksRepo, Registry } from "./db/registry.js";
import { FileWatcher } from "./jobs/file-watcher.js";
import { createJobParts, type JobParts } from "./jobs/parts.js";
import { fileHooks } from "./jobs/file-hooks.js";
import { withWorktrees } from "./review/worktree-hooks.js";
import { runnerWorktreeGit } from "./review/worktree-git.js";
import { WorktreeService } from "./review/worktree-service.js";
import { AuditService } from "./audit/service.js";
import { Metrics } from "./observability/metrics.js";
import { RunnerDirectory } from "./fleet/runner-directory.js";
import { SessionService } from "./security/sessions.js";
import { RunnerWorkdirs } from "./workdirs/on-runners.js";
import { WorkdirService } from "./workdirs/service.js";

/** The one service layer every door (MCP, REST, WebSocket) calls; the job engine's parts are listed in JobParts. */
export interface Services extends Omit<JobParts, "store"> {
  config: AppConfig;
  agents: AgentService;
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
  /** The runners (`corral runner`) that announced themselves. */
  runners: RunnerDirectory;
  /** Worktree jobs' changes, and merging or discarding them. */
  worktrees: WorktreeService;
}

/** Wires the services over the registry; they are ready once the user's prices are read. */
export async function createServices(config: AppConfig, registry: Registry): Promise<Services> {
  const costs = new CostService(registry);
  await costs.start();
  const agents = new AgentService({ config, registry });
  const audit = new AuditService(registry.audit);
  const files = new FileWatcher(registry.jobFiles, [config.dataDir]);
  const jobParts = createJobParts({
    config,
    registry,
    costs,
    audit,
    inProcessAdapters: inProcessAdapters(config, registry.jobMessages),
    // The server's own worktrees only: one a runner made is on that runner's machine.
    hooks: withWorktrees(
      fileHooks(files, config.dataDir),
      config.dataDir,
      (message) => process.emitWarning(message),
      async (wt) => wt.runner === undefined,
    ),
    runnerId: LOCAL_RUNNER,
  });
  const ollama = new OllamaService({ config, agents: registry.agents, models: registry.ollamaModels });
  agents.on("changed", ({ name, removed }) => {
    if (!removed) jobParts.jobEngine.agentChanged(name);
  });
  // Runners need PostgreSQL: with SQLite every workdir and worktree is on this machine.
  const onRunners =
    registry.dialect === "postgres"
      ? new RunnerWorkdirs(registry, { homeDir: config.homeDir, leaseMs: config.runnerLeaseMs, answerTimeoutMs: config.runnerAnswerTimeoutMs })
      : undefined;
  const workdirs = new WorkdirService({ config, agents, files, runners: onRunners });
  const metrics = new Metrics(jobParts.jobEvents, jobParts.jobEngine, registry.jobStats);
  const sessions = new SessionService(registry, config.dataDir, config.sessionTtlMs);
  const conversations = new ConversationHub({
    registry,
    agents,
    ...jobParts,
    leaseMs: config.hubLeaseMs,
    presenceMs: config.hubPresenceMs,
    maxRegistrations: config.hubMaxRegistrations,
    port: config.port,
  });
  const configFile = new ConfigFileService({ config, agents, costs });
  const runners = new RunnerDirectory(registry, config.runnerLeaseMs);
  const { store, ...engine } = jobParts;
  return {
    config,
    agents,
    ...engine,
    worktrees: new WorktreeService(registry.jobs, store, onRunners && runnerWorktreeGit((maker, ask) => onRunners.askWorktree(maker, ask))),
    costs,
    files,
    workdirs,
    ollama,
    audit,
    metrics,
    sessions,
    conversations,
    configFile,
    runners,
    mcpTasks: registry.mcpTasks,
  };
}
