import type { AgentList, JobList } from "@corral/shared";
import { request } from "../client.js";
import { defineCommand } from "../command.js";
import { printJson } from "../format.js";

export const status = defineCommand({
  name: "status",
  summary: "whether the server answers, its jobs under way and its agents",
  usage: "",
  help: `Checks the server at CORRAL_URL (or the host and port the server's settings give) with the
token, and says how many jobs are running and queued and how many agents are enabled and available.
Exits 0 when it answers, else with the exit code of what went wrong (see corral --help).

  --json             {"url","running","queued","agents":{"total","enabled","available"}}`,
  options: {},
  positionals: { min: 0, max: 0 },
  async run({ json, target }) {
    const server = target();
    const count = async (jobStatus: string) => (await request<JobList>(server, "GET", `/api/jobs?status=${jobStatus}&limit=1`)).total;
    const [running, queued, list] = await Promise.all([count("running"), count("queued"), request<AgentList>(server, "GET", "/api/agents")]);
    const agents = {
      total: list.agents.length,
      enabled: list.agents.filter((a) => a.enabled).length,
      available: list.agents.filter((a) => a.enabled && a.availability.available).length,
    };
    if (json) printJson({ url: server.url, running, queued, agents });
    else {
      process.stdout.write(
        `Corral at ${server.url} is up.\n` +
          `  jobs:   ${running} running, ${queued} queued\n` +
          `  agents: ${agents.enabled} enabled of ${agents.total}, ${agents.available} of them available\n`,
      );
    }
    return 0;
  },
});
