import type { AppConfig } from "./config.js";
import { AgentService } from "./agents/service.js";
import type { Db } from "./db/client.js";
import { createAgentsRepo } from "./db/repos/agents.js";
import { createJobsRepo } from "./db/repos/jobs.js";
import { JobService } from "./jobs/service.js";

/** The one service layer every door (MCP, REST, WebSocket) calls. */
export interface Services {
  config: AppConfig;
  agents: AgentService;
  jobs: JobService;
}

export function createServices(config: AppConfig, db: Db): Services {
  const agentsRepo = createAgentsRepo(db);
  const jobsRepo = createJobsRepo(db);
  const agents = new AgentService({ config, agents: agentsRepo, hasJobs: (name) => jobsRepo.hasJobs(name) });
  const jobs = new JobService({ config, jobs: jobsRepo, agents: agentsRepo });
  agents.on("changed", ({ name, removed }) => {
    if (!removed) jobs.agentChanged(name);
  });
  return { config, agents, jobs };
}
