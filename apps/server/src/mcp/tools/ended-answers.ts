import type { Job } from "@corral/shared";
import type { CostService } from "../../costs/service.js";
import type { JobEvents } from "../../jobs/job-events.js";

/** Answers kept; an answer is at most a few KiB (the output's tail is cut at 4,000 characters). */
const MAX_ANSWERS = 256;

/**
 * `<agent>_done` answers of ended jobs, shared by every MCP session. An ended job's row, files and
 * output no longer change (a retry queues the job again before it ends; the runner's last write
 * is its end), so callers polling it are answered without reading the registry and the log
 * again. Anything that still changes one is let go of: a stored change of a job (its `job` event)
 * and a new price (repricing rewrites ended jobs' estimated costs). Least recently used answers
 * go first.
 */
export class EndedAnswers {
  private answers = new Map<string, string>();
  private readonly forgetJob = (job: Job) => this.answers.delete(job.id);
  private readonly forgetAll = () => this.answers.clear();

  constructor(
    private readonly jobs: JobEvents,
    private readonly costs: CostService,
    private readonly max = MAX_ANSWERS,
  ) {
    jobs.on("job", this.forgetJob);
    costs.on("repriced", this.forgetAll);
  }

  get(jobId: string): string | undefined {
    const text = this.answers.get(jobId);
    if (text === undefined) return undefined;
    this.answers.delete(jobId);
    this.answers.set(jobId, text);
    return text;
  }

  /** Keeps `text` as the answer for an ended job. */
  set(jobId: string, text: string): void {
    this.answers.delete(jobId);
    this.answers.set(jobId, text);
    if (this.answers.size > this.max) this.answers.delete(this.answers.keys().next().value as string);
  }

  close(): void {
    this.jobs.off("job", this.forgetJob);
    this.costs.off("repriced", this.forgetAll);
    this.answers.clear();
  }
}
