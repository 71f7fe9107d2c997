import type { Job, LaunchJobBody } from "@corral/shared";

/** The same inputs a job ran with, as a launch body; a follow-up continues the same earlier turn again. */
export function relaunchBody(job: Job): LaunchJobBody {
  return {
    agent: job.agent,
    prompt: job.prompt,
    workdir: job.workdir,
    ...(job.model ? { model: job.model } : {}),
    timeoutS: job.timeoutS,
    ...(job.followUpOf ? { session: job.followUpOf } : {}),
  };
}

/** A reply in a job's thread: a follow-up of the thread's last job, in its workdir with its model (the server's defaults). */
export function replyBody(last: Job, prompt: string): LaunchJobBody {
  return { agent: last.agent, prompt, session: last.id };
}
