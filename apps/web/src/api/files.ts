import type { DirListing, FileRead, JobFiles, WorkdirList } from "@corral/shared";
import { apiFetch, queryString } from "./client.js";

export const filesApi = {
  workdirs: (signal?: AbortSignal) => apiFetch<WorkdirList>("/api/workdirs", { signal }),
  list: (path: string, signal?: AbortSignal) => apiFetch<DirListing>(`/api/workdirs/list${queryString({ path })}`, { signal }),
  /** The part of a file from `offset` (bytes), at most `limit` bytes of it. */
  read: (path: string, offset: number, limit: number, signal?: AbortSignal) =>
    apiFetch<FileRead>(`/api/workdirs/read${queryString({ path, offset, limit })}`, { signal }),
  /** The raw bytes, for images and downloads (the cookie authenticates a plain link). */
  rawUrl: (path: string, download = false) => `/api/workdirs/raw${queryString({ path, download: download ? 1 : undefined })}`,
  jobFiles: (jobId: string, signal?: AbortSignal) => apiFetch<JobFiles>(`/api/jobs/${encodeURIComponent(jobId)}/files`, { signal }),
};
