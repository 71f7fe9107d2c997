import type { AgentList, Job, JobGroup, LaunchManyBody } from "@corral/shared";
import { request } from "../client.js";
import { defineCommand, usageError } from "../command.js";
import { exitForStatus } from "../exit-codes.js";
import { followJob } from "../follow.js";
import { jobSummary, oneLine, printJson } from "../format.js";
import type { Target } from "../settings.js";
import { LAUNCH_HELP, LAUNCH_OPTIONS, launchFields, promptOf } from "../launch.js";

export const all = defineCommand({
  name: "all",
  summary: "run one prompt on several agents and print each answer",
  usage: "[--agents a,b] [options] <prompt…>",
  help: `Launches the prompt on every enabled agent whose CLI or server is available (or on the
agents named by --agents), one job each in its own workdir (POST /api/jobs/many), waits for them
all, and prints each answer under its agent's name. Exits 0 when every job succeeded, else with
the status code of the first job (in the agents' order) that did not.

  --agents a,b       the agents to ask (default: every enabled, available agent)
  --shared-workdir   all the jobs in one workdir (--workdir, or the first agent's)
${LAUNCH_HELP}
  --json             print {"jobs"}: the ended jobs (with --async, as launched), in the agents' order`,
  options: { ...LAUNCH_OPTIONS, agents: { type: "string" }, "shared-workdir": { type: "boolean" } },
  positionals: { min: 1, max: Number.POSITIVE_INFINITY },
  async run({ values, positionals, json, target }) {
    const server = target();
    const fields = launchFields(all, values);
    const names = values.agents !== undefined ? values.agents.split(",").map((a) => a.trim()) : await availableAgents(server);
    if (!names.length) throw usageError(all, "no agent is enabled and available: see corral agents, or name some with --agents");
    const body = { agents: names, prompt: promptOf(positionals), sharedWorkdir: values["shared-workdir"], ...fields } satisfies LaunchManyBody;
    const group = await request<JobGroup>(server, "POST", "/api/jobs/many", body);
    if (values.async) {
      if (json) printJson(group);
      else for (const job of group.jobs) process.stdout.write(`${job.id}  ${job.agent}\n`);
      return 0;
    }
    if (!json) process.stderr.write(`${group.jobs.length} jobs launched: ${group.jobs.map((j) => `${j.agent} ${j.id}`).join(", ")}\n`);
    const ended: Job[] = await Promise.all(group.jobs.map((job) => followJob(server, job.id)));
    if (json) printJson({ jobs: ended });
    else for (const job of ended) printAnswer(job);
    const failed = ended.find((job) => job.status !== "succeeded");
    return failed ? exitForStatus(failed.status) : 0;
  },
});

async function availableAgents(server: Target): Promise<string[]> {
  const list = await request<AgentList>(server, "GET", "/api/agents");
  return list.agents.filter((a) => a.enabled && a.availability.available).map((a) => a.name);
}

function printAnswer(job: Job): void {
  process.stdout.write(`\n== ${oneLine(job.agent)} ==\n`);
  if (job.finalText) process.stdout.write(job.finalText.endsWith("\n") ? job.finalText : `${job.finalText}\n`);
  process.stdout.write(`-- ${jobSummary(job)}\n`);
}
