import type { JobList } from "@corral/shared";
import { request } from "../client.js";
import { defineCommand } from "../command.js";
import { jobCost, jobDuration, oneLine, printJson, table } from "../format.js";

export const jobs = defineCommand({
  name: "jobs",
  summary: "list jobs, newest first",
  usage: "[--agent A] [--status S,S] [--search TEXT] [--limit N] [--offset N]",
  help: `Lists jobs newest first, with the filters of the REST list (GET /api/jobs).

  --agent NAME       only this agent's jobs
  --status S,S       only these statuses (queued, running, succeeded, failed, cancelled,
                     timed_out, budget_exceeded, lost)
  --search TEXT      text in the job's id, prompt or error
  --limit N          at most N jobs (default 50, at most 500)
  --offset N         skip the first N
  --json             print the list as the REST API answers it: {"jobs","total","totalCapped"}`,
  options: {
    agent: { type: "string" },
    status: { type: "string" },
    search: { type: "string" },
    limit: { type: "string" },
    offset: { type: "string" },
  },
  positionals: { min: 0, max: 0 },
  async run({ values, json, target }) {
    const query = new URLSearchParams();
    for (const [key, value] of [
      ["agent", values.agent],
      ["status", values.status],
      ["q", values.search],
      ["limit", values.limit],
      ["offset", values.offset],
    ] as const) {
      if (value !== undefined) query.set(key, value);
    }
    const list = await request<JobList>(target(), "GET", `/api/jobs${query.size ? `?${query}` : ""}`);
    if (json) {
      printJson(list);
      return 0;
    }
    const rows = list.jobs.map((job) => [
      job.id,
      oneLine(job.agent),
      job.status,
      new Date(job.createdAt).toLocaleString("sv-SE").slice(0, 16),
      jobDuration(job),
      jobCost(job),
      oneLine(job.prompt, 60),
    ]);
    process.stdout.write(table(["ID", "AGENT", "STATUS", "CREATED", "TIME", "COST", "PROMPT"], rows));
    const more = list.total - list.jobs.length - Number(values.offset ?? 0);
    if (more > 0) process.stdout.write(`… ${list.totalCapped ? "at least " : ""}${more} more (--offset, --limit)\n`);
    return 0;
  },
});
