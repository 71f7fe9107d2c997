import { isFinalStatus, type Job } from "@corral/shared";
import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { filesApi } from "../api/files.js";
import { FILE_PART_BYTES, nextPartOffset } from "../lib/domain/file-parts.js";
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

/**
 * A file's text a part at a time: the first part, then each `fetchNextPage` the next. When file
 * events refetch it, the parts are read again from the start, each from the new end of the one before.
 */
export function useFileParts(path: string, enabled: boolean) {
  return useInfiniteQuery({
    queryKey: queryKeys.files.file(path),
    queryFn: ({ pageParam, signal }) => filesApi.read(path, pageParam, FILE_PART_BYTES, signal),
    initialPageParam: 0,
    getNextPageParam: nextPartOffset,
    enabled,
  });
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
