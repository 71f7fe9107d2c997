import type {
  DiscardResult,
  Job,
  JobAttemptList,
  JobChanges,
  JobGroup,
  JobList,
  JobRelaunches,
  JobStatus,
  JobThread,
  LaunchJobBody,
  LaunchManyBody,
  MergeResult,
  OutputPage,
  OutputTail,
  ReadablePage,
} from "@corral/shared";
import { apiFetch, queryString } from "./client.js";

export interface JobFilters {
  agent?: string;
  statuses?: JobStatus[];
  q?: string;
}

export const jobsApi = {
  list: (filters: JobFilters, page: { limit: number; offset: number }, signal?: AbortSignal) =>
    apiFetch<JobList>(
      `/api/jobs${queryString({
        agent: filters.agent,
        status: filters.statuses?.length ? filters.statuses.join(",") : undefined,
        q: filters.q?.trim() || undefined,
        limit: page.limit,
        offset: page.offset,
      })}`,
      { signal },
    ),
  get: (id: string, signal?: AbortSignal) => apiFetch<Job>(`/api/jobs/${encodeURIComponent(id)}`, { signal }),
  attempts: (id: string, signal?: AbortSignal) => apiFetch<JobAttemptList>(`/api/jobs/${encodeURIComponent(id)}/attempts`, { signal }),
  group: (id: string, signal?: AbortSignal) => apiFetch<JobGroup>(`/api/jobs/${encodeURIComponent(id)}/group`, { signal }),
  relaunches: (id: string, signal?: AbortSignal) => apiFetch<JobRelaunches>(`/api/jobs/${encodeURIComponent(id)}/relaunches`, { signal }),
  thread: (id: string, signal?: AbortSignal) => apiFetch<JobThread>(`/api/jobs/${encodeURIComponent(id)}/thread`, { signal }),
  launch: (body: LaunchJobBody) => apiFetch<Job>("/api/jobs", { method: "POST", body }),
  launchMany: (body: LaunchManyBody) => apiFetch<JobGroup>("/api/jobs/many", { method: "POST", body }),
  cancel: (id: string) => apiFetch<Job>(`/api/jobs/${encodeURIComponent(id)}/cancel`, { method: "POST" }),
  changes: (id: string, signal?: AbortSignal) => apiFetch<JobChanges>(`/api/jobs/${encodeURIComponent(id)}/diff`, { signal }),
  /** `head`: the commit whose diff was read; the server refuses a branch that moved since. */
  merge: (id: string, head?: string) =>
    apiFetch<MergeResult & { job: Job }>(`/api/jobs/${encodeURIComponent(id)}/merge${queryString({ head })}`, { method: "POST" }),
  discard: (id: string) => apiFetch<DiscardResult & { job: Job }>(`/api/jobs/${encodeURIComponent(id)}/discard`, { method: "POST" }),
  output: (id: string, cursor: number, signal?: AbortSignal) =>
    apiFetch<OutputPage>(`/api/jobs/${encodeURIComponent(id)}/output${queryString({ cursor, limit: 1024 * 1024 })}`, { signal }),
  readable: (id: string, cursor: number, signal?: AbortSignal) =>
    apiFetch<ReadablePage>(`/api/jobs/${encodeURIComponent(id)}/readable${queryString({ cursor, limit: 1024 * 1024 })}`, { signal }),
  tail: (id: string, signal?: AbortSignal, chars?: number) =>
    apiFetch<OutputTail>(`/api/jobs/${encodeURIComponent(id)}/tail${queryString({ chars })}`, { signal }),
};
