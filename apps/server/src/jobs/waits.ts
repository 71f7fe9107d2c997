import { isFinalStatus, type Job } from "@corral/shared";
import { MAX_TIMER_MS } from "../lib/timer.js";
import type { JobEvents } from "./job-events.js";
import type { JobQueries } from "./queries.js";

/** Waiting for jobs to end (`<agent>_run`, `corral_wait`, a cancel of a runner's job). */
export class JobWaits {
  constructor(
    private readonly events: JobEvents,
    private readonly jobs: Pick<JobQueries, "get">,
  ) {}

  /** Resolves with the jobs once all have ended, or with their current state at the timeout. */
  async waitFor(ids: string[], timeoutMs: number, signal?: AbortSignal): Promise<Job[]> {
    const current = () => Promise.all(ids.map((id) => this.jobs.get(id)));
    // Listening before the first read: a job that ends while it is read is still heard of.
    const ended = new Set<string>();
    const allEnded = () => ids.every((id) => ended.has(id));
    let wake = () => {};
    const onJob = (job: Job) => {
      if (!isFinalStatus(job.status) || !ids.includes(job.id)) return;
      ended.add(job.id);
      if (allEnded()) wake();
    };
    this.events.on("job", onJob);
    const onAbort = () => wake();
    let timer: NodeJS.Timeout | undefined;
    try {
      const jobs = await current();
      for (const job of jobs) if (isFinalStatus(job.status)) ended.add(job.id);
      // A job whose end was heard while it was read was read before that end: read again.
      if (allEnded()) return jobs.every((job) => isFinalStatus(job.status)) ? jobs : await current();
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, Math.min(timeoutMs, MAX_TIMER_MS));
        signal?.addEventListener("abort", onAbort, { once: true });
        if (signal?.aborted || allEnded()) resolve();
      });
      return await current();
    } finally {
      clearTimeout(timer);
      this.events.off("job", onJob);
      signal?.removeEventListener("abort", onAbort);
    }
  }
}
