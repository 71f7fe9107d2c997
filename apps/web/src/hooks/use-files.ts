import { isFinalStatus, type Job } from "@corral/shared";
import { useQuery } from "@tanstack/react-query";
import { filesApi } from "../api/files.js";
import { queryKeys } from "../lib/transport/query-keys.js";
import { useLiveStatus } from "./use-live-status.js";

export function useWorkdirs() {
  return useQuery({ queryKey: queryKeys.files.roots(), queryFn: ({ signal }) => filesApi.workdirs(signal) });
}

export function useDir(path: string, enabled = true) {
  const live = useLiveStatus();
  return useQuery({
    queryKey: queryKeys.files.dir(path),
    queryFn: ({ signal }) => filesApi.list(path, signal),
    enabled,
    // File events invalidate these when the stream is up; otherwise look again now and then.
    refetchInterval: live ? false : 4000,
  });
}

export function useFileContent(path: string, enabled: boolean) {
  return useQuery({ queryKey: queryKeys.files.file(path), queryFn: ({ signal }) => filesApi.read(path, signal), enabled });
}

/** The files a job created, changed or deleted; the stream keeps them current while it is up. */
export function useJobFiles(job: Job) {
  const live = useLiveStatus();
  return useQuery({
    queryKey: queryKeys.jobs.files(job.id),
    queryFn: ({ signal }) => filesApi.jobFiles(job.id, signal),
    refetchInterval: isFinalStatus(job.status) || live ? false : 2000,
  });
}
