import type { Job, JobList } from "@corral/shared";
import type { QueryClient } from "@tanstack/react-query";
import { queryKeys } from "./query-keys.js";

/** Puts a job the stream reported into every cached view of it. */
export function writeJobToCache(client: QueryClient, job: Job): void {
  client.setQueryData(queryKeys.jobs.detail(job.id), job);
  const patch = (list: JobList | undefined): JobList | undefined =>
    list?.jobs.some((j) => j.id === job.id) ? { ...list, jobs: list.jobs.map((j) => (j.id === job.id ? job : j)) } : list;
  client.setQueriesData<JobList>({ queryKey: queryKeys.jobs.lists() }, patch);
}
