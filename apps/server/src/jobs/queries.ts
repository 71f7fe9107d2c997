import type { Job, JobAttempt, JobGroup, JobList, JobListQuery, JobRelaunches, JobThread } from "@corral/shared";
import type { Registry } from "../db/registry.js";
import { notFound } from "../lib/errors.js";
import { toJob, toJobAttempt } from "./job-view.js";

/** A thread lists its conversation's newest jobs, at most. */
export const THREAD_LIMIT = 200;
/** A job page lists the newest of its relaunches, at most. */
export const RELAUNCHES_LIMIT = 50;

/** Jobs as every door reads them: one, a page of them, a conversation's, a launch's, a job's attempts. */
export class JobQueries {
  constructor(private readonly registry: Pick<Registry, "jobs">) {}

  async find(id: string): Promise<Job | undefined> {
    const row = await this.registry.jobs.get(id);
    return row && toJob(row);
  }

  async get(id: string): Promise<Job> {
    const row = await this.registry.jobs.get(id);
    if (!row) throw notFound(`job ${id} not found`, "job_id");
    return toJob(row);
  }

  async list(query: JobListQuery): Promise<JobList> {
    const { rows, ...counted } = await this.registry.jobs.list(query);
    return { jobs: rows.map(toJob), ...counted };
  }

  /** The jobs of a job's conversation, oldest first: the newest THREAD_LIMIT of them. */
  async thread(id: string): Promise<JobThread> {
    const job = await this.get(id);
    const rows = await this.registry.jobs.thread(job.conversationId, THREAD_LIMIT);
    // A job stored before conversations were recorded has none: it is its own.
    return { conversationId: job.conversationId, jobs: rows.length ? rows.map(toJob) : [job] };
  }

  /** The jobs launched together with this one (itself alone when it was launched alone), in launch order. */
  async group(id: string): Promise<JobGroup> {
    const job = await this.get(id);
    return { jobs: job.groupId ? (await this.registry.jobs.group(job.groupId)).map(toJob) : [job] };
  }

  /** The jobs relaunched from this one, oldest first: the newest RELAUNCHES_LIMIT of them. */
  async relaunches(id: string): Promise<JobRelaunches> {
    await this.get(id);
    return { jobs: (await this.registry.jobs.relaunches(id, RELAUNCHES_LIMIT)).map(toJob) };
  }

  async attempts(id: string): Promise<JobAttempt[]> {
    await this.get(id);
    return (await this.registry.jobs.attempts(id)).map(toJobAttempt);
  }
}
