import { stripAnsi, type Job, type LaunchJobBody } from "@corral/shared";

/** The same inputs a job ran with, as a launch body. */
export function relaunchBody(job: Job): LaunchJobBody {
  return {
    agent: job.agent,
    prompt: job.prompt,
    workdir: job.workdir,
    ...(job.model ? { model: job.model } : {}),
    timeoutS: job.timeoutS,
  };
}

/** The last non-empty line of a job's output, without colour codes, for one-line activity displays. */
export function lastLine(text: string): string {
  const lines = stripAnsi(text).split(/\r?\n|\r/);
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]?.trim();
    if (line) return line;
  }
  return "";
}
