import { isFinalStatus, type Job } from "@corral/shared";
import { request } from "../client.js";
import { defineCommand } from "../command.js";
import { printJson } from "../format.js";

export const cancel = defineCommand({
  name: "cancel",
  summary: "cancel a queued or running job",
  usage: "<job>",
  help: `Asks the server to cancel the job: a queued job ends at once, a running one once its worker
has stopped (corral logs -f <job> waits for that). Exits 0 once the server has taken the request,
also for a job that had already ended (it says so).

  --json             print the job as the server answered`,
  options: {},
  positionals: { min: 1, max: 1 },
  async run({ positionals, json, target }) {
    const [jobId = ""] = positionals;
    const job = await request<Job>(target(), "POST", `/api/jobs/${encodeURIComponent(jobId)}/cancel`);
    if (json) printJson(job);
    else if (job.status === "cancelled") process.stdout.write(`job ${job.id} cancelled\n`);
    else if (isFinalStatus(job.status) && job.cancel === null) process.stdout.write(`job ${job.id} had already ended: ${job.status}\n`);
    else process.stdout.write(`job ${job.id}: cancel requested, its worker is being stopped\n`);
    return 0;
  },
});
