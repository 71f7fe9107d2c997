import type { Job, LaunchJobBody } from "@corral/shared";

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
