import type { Agent, Job, JobList } from "@corral/shared";
import { request } from "../client.js";
import { defineCommand } from "../command.js";
import { CliError, EXIT, exitForStatus } from "../exit-codes.js";
import { followJob, type OutputPiece } from "../follow.js";
import { jobDuration, jobSummary, oneLine, printJson, table } from "../format.js";
import { writeOutput } from "../launch.js";
import { followReadable, ReadablePrinter } from "../readable.js";
import type { Target } from "../settings.js";

/** An agent's jobs `logs <agent>` lists before the last one's output. */
const RECENT = 10;

export const logs = defineCommand({
  name: "logs",
  summary: "print a job's output, or an agent's recent jobs and its last one's; -f follows it",
  usage: "[-f] [--raw] <job | agent>",
  help: `Prints the job's output as the panel's Readable view shows it: the answer, the tools the
worker called and their results, its usage, one line each. With an agent's name instead of a job
id, lists that agent's ${RECENT} most recent jobs, then prints the last one's output. With -f,
follows the live output until the job ends, reconnecting and resuming where it stopped if the
connection drops (for up to a minute), and exits with the job's status (see corral --help).
Without -f, prints what there is and exits with the job's status if it has ended, else 0.

  -f, --follow       follow the output until the job ends
  --raw              the worker's own lines instead (a CLI's JSON events as it printed them): its
                     stdout on stdout, its stderr and Corral's notes on stderr
  --json             one JSON object per line: {"type":"output","stream","text","cursor"} for each
                     piece as the worker printed it, then {"type":"job","job"} with the job`,
  options: { follow: { type: "boolean", short: "f" }, raw: { type: "boolean" } },
  positionals: { min: 1, max: 1 },
  async run({ values, positionals, json, target }) {
    const [name = ""] = positionals;
    const server = target();
    const jobId = await jobNamed(server, name, !json);
    if (json) {
      const job = await followJob(server, jobId, (piece: OutputPiece) => printJson({ type: "output", ...piece }), !values.follow);
      printJson({ type: "job", job });
      return exitForStatus(job.status);
    }
    const job = values.raw
      ? await followJob(server, jobId, writeOutput, !values.follow)
      : await followReadable(server, jobId, new ReadablePrinter((text) => process.stdout.write(text)), !values.follow);
    if (values.follow) process.stderr.write(`${jobSummary(job)}\n`);
    return exitForStatus(job.status);
  },
});

/**
 * The job `name` names: a job's id, or else an agent's name, whose last job it is (its recent jobs
 * listed first on stderr when `list`).
 */
async function jobNamed(server: Target, name: string, list: boolean): Promise<string> {
  let notAJob: CliError | null = null;
  const job = await request<Job>(server, "GET", `/api/jobs/${encodeURIComponent(name)}`).catch((err: unknown) => {
    if (!(err instanceof CliError && err.code === EXIT.refused)) throw err;
    notAJob = err;
    return null;
  });
  if (job) return job.id;
  const agent = await request<Agent>(server, "GET", `/api/agents/${encodeURIComponent(name)}`).catch((err: unknown) => {
    if (err instanceof CliError && err.code === EXIT.refused) return null;
    throw err;
  });
  if (!agent) {
    const why = (notAJob as CliError | null)?.message ?? `no job ${oneLine(name, 80)}`;
    throw new CliError(`${why}; nor is it an agent's name (corral jobs and corral agents list them)`, EXIT.refused);
  }
  const recent = await request<JobList>(server, "GET", `/api/jobs?agent=${encodeURIComponent(agent.name)}&limit=${RECENT}`);
  const [last] = recent.jobs;
  if (!last) throw new CliError(`agent ${agent.name} has run no job yet: corral run ${agent.name} <prompt>`, EXIT.refused);
  if (list) {
    const rows = recent.jobs.map((j) => [
      j.id,
      j.status.replace("_", " "),
      jobDuration(j),
      new Date(j.createdAt).toISOString().slice(0, 19).replace("T", " "),
      oneLine(j.prompt, 60),
    ]);
    process.stderr.write(table(["JOB", "STATUS", "TOOK", "LAUNCHED (UTC)", "PROMPT"], rows));
    process.stderr.write(`\nthe last one, ${last.id}:\n`);
  }
  return last.id;
}
