import type { Job } from "@corral/shared";
import { type CommandName, numberOption } from "./command.js";
import { followJob, type OutputPiece } from "./follow.js";
import { jobSummary } from "./format.js";
import type { Target } from "./settings.js";

/** Launch options `run` and `all` share, with the names of the REST body's fields. */
export const LAUNCH_OPTIONS = {
  workdir: { type: "string" },
  model: { type: "string" },
  timeout: { type: "string" },
  "max-cost": { type: "string" },
  "max-tokens": { type: "string" },
  worktree: { type: "boolean" },
  base: { type: "string" },
  async: { type: "boolean" },
} as const;

export const LAUNCH_HELP = `  --workdir DIR      where the job runs (default: the agent's workdir)
  --model MODEL      the model for this job (default: the agent's)
  --timeout S        seconds before the job is stopped (timed_out)
  --max-cost USD     stop the job (budget_exceeded) once it costs more
  --max-tokens N     stop the job (budget_exceeded) past this many tokens
  --worktree         run in a new git worktree of the workdir's repository, on branch corral/<job id>
  --base REF         the branch, tag or commit that worktree starts from (default: HEAD)
  --async            print the job and exit at once, without waiting for its end`;

type LaunchValues = {
  workdir?: string;
  model?: string;
  timeout?: string;
  "max-cost"?: string;
  "max-tokens"?: string;
  worktree?: boolean;
  base?: string;
};

/** The launch fields of a REST body from the options given (absent ones are left to the server's defaults). */
export function launchFields(command: CommandName, values: LaunchValues) {
  return {
    workdir: values.workdir,
    model: values.model,
    timeoutS: numberOption(command, "timeout", values.timeout),
    maxCostUsd: numberOption(command, "max-cost", values["max-cost"]),
    maxTokens: numberOption(command, "max-tokens", values["max-tokens"]),
    worktree: values.worktree,
    base: values.base,
  };
}

/** The words of a prompt given unquoted, as one prompt. */
export const promptOf = (words: string[]): string => words.join(" ");

/** Writes a piece of a job's output where a person or a pipe expects it: the worker's stdout to stdout, the rest to stderr. */
export function writeOutput(piece: OutputPiece): void {
  (piece.stream === "out" ? process.stdout : process.stderr).write(piece.text);
}

/** Waits for a launched job's end, telling on stderr how to watch it meanwhile (unless `quiet`). */
export async function awaitJob(target: Target, job: Job, quiet: boolean): Promise<Job> {
  if (!quiet) process.stderr.write(`job ${job.id} ${job.status} on ${job.agent}; watch it with: corral logs -f ${job.id}\n`);
  const ended = await followJob(target, job.id);
  if (!quiet) process.stderr.write(`${jobSummary(ended)}\n`);
  return ended;
}
