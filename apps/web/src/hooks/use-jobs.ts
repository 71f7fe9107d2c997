import { type DiscardResult, isFinalStatus, type Job, type LaunchJobBody, type LaunchManyBody } from "@corral/shared";
import { useEffect, useRef } from "react";
import { keepPreviousData, useMutation, useQuery, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { jobsApi, type JobFilters } from "../api/jobs.js";
import { appendOutput, emptyOutput, type OutputBuffer } from "../lib/domain/output-buffer.js";
import { appendReadable, emptyReadable, type ReadableBuffer } from "../lib/domain/readable-buffer.js";
import { readsChanges } from "../lib/domain/worktree-change.js";
import { queryKeys } from "../lib/transport/query-keys.js";
import { useLiveStatus } from "./use-live-status.js";

/** Poll intervals while no WebSocket feeds the cache; with one, only a slow safety poll remains. */
const POLL_FAST = 1000;
const POLL_SLOW = 5000;
const ACTIVITY_POLL = 2000;

export function useJobList(filters: JobFilters, page: { limit: number; offset: number }) {
  const live = useLiveStatus();
  return useQuery({
    queryKey: queryKeys.jobs.list(filters, page),
    queryFn: ({ signal }) => jobsApi.list(filters, page, signal),
    placeholderData: keepPreviousData,
    refetchInterval: live ? 15_000 : POLL_SLOW,
  });
}

export function useActiveJobs() {
  const live = useLiveStatus();
  return useQuery({
    queryKey: queryKeys.jobs.active(),
    queryFn: ({ signal }) => jobsApi.list({ statuses: ["running", "queued"] }, { limit: 200, offset: 0 }, signal),
    refetchInterval: live ? 10_000 : POLL_FAST,
  });
}

export function useJob(id: string) {
  const live = useLiveStatus();
  return useQuery({
    queryKey: queryKeys.jobs.detail(id),
    queryFn: ({ signal }) => jobsApi.get(id, signal),
    refetchInterval: (query) => (query.state.data && isFinalStatus(query.state.data.status) ? false : live ? 10_000 : POLL_FAST),
  });
}

/**
 * The conversation a job belongs to (its thread). Read again while one of its jobs has not ended,
 * and whenever a launch adds a turn (useLaunchJob); the jobs' live status comes from useJob.
 */
export function useJobThread(id: string) {
  return useQuery({
    queryKey: queryKeys.jobs.thread(id),
    queryFn: ({ signal }) => jobsApi.thread(id, signal),
    refetchInterval: (query) => (query.state.data?.jobs.every((j) => isFinalStatus(j.status)) ? false : POLL_SLOW),
  });
}

/** The jobs launched together with a job (its launch to several agents); the members never change. */
export function useJobGroup(id: string | null) {
  return useQuery({
    queryKey: queryKeys.jobs.group(id ?? ""),
    queryFn: ({ signal }) => jobsApi.group(id as string, signal),
    enabled: Boolean(id),
    staleTime: Infinity,
  });
}

/** The jobs relaunched from a job; a relaunch from this panel adds one (useLaunchJob). */
export function useJobRelaunches(id: string) {
  return useQuery({
    queryKey: queryKeys.jobs.relaunches(id),
    queryFn: ({ signal }) => jobsApi.relaunches(id, signal),
  });
}

/**
 * A retried job's attempts, each with its own times, error and usage; read again whenever the
 * job's attempt, status or usage changes (the job itself is live). A job tried once has none to show.
 */
export function useJobAttempts(job: Job | undefined) {
  const retried = (job?.attempt ?? 1) > 1;
  return useQuery({
    queryKey: [...queryKeys.jobs.attempts(job?.id ?? ""), job?.attempt, job?.status, job?.usage.inputTokens, job?.usage.outputTokens],
    queryFn: ({ signal }) => jobsApi.attempts(job?.id ?? "", signal),
    enabled: retried,
    placeholderData: keepPreviousData,
  });
}

/** A job read once, without polling: the Launch page copies a job it relaunches from. */
export function useJobSnapshot(id: string | null) {
  return useQuery({
    queryKey: queryKeys.jobs.detail(id ?? ""),
    queryFn: ({ signal }) => jobsApi.get(id as string, signal),
    enabled: Boolean(id),
  });
}

/**
 * The latest line of a running job as the Readable view reads it, for its card on the Jobs page.
 * Read again every few seconds while it runs: a job's output size is stored only when it ends,
 * and streaming every running job's output to the list would cost far more than one short read.
 */
export function useJobActivity(id: string, running: boolean) {
  return useQuery({
    queryKey: queryKeys.jobs.tail(id),
    queryFn: ({ signal }) => jobsApi.tail(id, signal),
    enabled: running,
    refetchInterval: running ? ACTIVITY_POLL : false,
  });
}

/** Reads pages from the cursor the cache holds and appends them; a stream message racing it is kept, not doubled. */
async function readMore(client: QueryClient, id: string, signal: AbortSignal): Promise<OutputBuffer> {
  const key = queryKeys.jobs.output(id);
  for (let pages = 0; pages < 8; pages++) {
    const before = client.getQueryData<OutputBuffer>(key) ?? emptyOutput();
    if (before.complete) return before;
    const page = await jobsApi.output(id, before.cursor, signal);
    const current = client.getQueryData<OutputBuffer>(key) ?? before;
    const next = appendOutput(current, page.chunks, before.cursor, page.cursor, page.complete);
    client.setQueryData(key, next);
    if (page.complete || page.cursor === before.cursor || page.chunks.length === 0) return next;
  }
  return client.getQueryData<OutputBuffer>(key) ?? emptyOutput();
}

export function useJobOutput(id: string, running: boolean) {
  const client = useQueryClient();
  const live = useLiveStatus();
  return useQuery({
    queryKey: queryKeys.jobs.output(id),
    // With the WebSocket up, the stream fills this entry (from the cursor it holds); REST only when it is down.
    queryFn: ({ signal }) =>
      live ? Promise.resolve(client.getQueryData<OutputBuffer>(queryKeys.jobs.output(id)) ?? emptyOutput()) : readMore(client, id, signal),
    structuralSharing: false,
    staleTime: live ? Infinity : 0,
    refetchInterval: (query) => (query.state.data?.complete || live ? false : running ? 700 : 1500),
  });
}

/**
 * Reads readable pages from the cursor the cache holds, as readMore does for the raw output, until
 * the page that ends it or one that reads nothing new: nothing else asks again once the raw
 * output has stopped growing, and a page holds a bounded number of events, so a long log is many pages.
 */
async function readMoreReadable(client: QueryClient, id: string, signal: AbortSignal): Promise<ReadableBuffer> {
  const key = queryKeys.jobs.readable(id);
  for (;;) {
    const before = client.getQueryData<ReadableBuffer>(key) ?? emptyReadable();
    if (before.complete) return before;
    const page = await jobsApi.readable(id, before.cursor, signal);
    const next = appendReadable(client.getQueryData<ReadableBuffer>(key) ?? before, page.events, before.cursor, page.cursor, page.complete);
    client.setQueryData(key, next);
    if (page.complete || page.cursor === before.cursor) return next;
  }
}

/**
 * The job's output as events its agent kind read on the server (the Readable view). It reads on
 * whenever the raw output grows, which the stream (or the poll without it) already tells.
 */
export function useJobReadable(id: string, enabled: boolean, raw: OutputBuffer | undefined) {
  const client = useQueryClient();
  const query = useQuery({
    queryKey: queryKeys.jobs.readable(id),
    queryFn: ({ signal }) => readMoreReadable(client, id, signal),
    enabled,
    structuralSharing: false,
    staleTime: Infinity,
  });
  const { refetch, isFetching } = query;
  // A read in flight is left to finish (restarting it on every streamed chunk could starve it);
  // the next read starts once it has, if the raw output moved meanwhile.
  const rawState = `${raw?.cursor ?? 0}:${raw?.complete ?? false}`;
  const readFor = useRef("");
  useEffect(() => {
    if (!enabled || isFetching || readFor.current === rawState) return;
    if (client.getQueryData<ReadableBuffer>(queryKeys.jobs.readable(id))?.complete) return;
    readFor.current = rawState;
    void refetch({ cancelRefetch: false });
  }, [client, id, enabled, isFetching, rawState, refetch]);
  return query;
}

export function useCancelJob() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => jobsApi.cancel(id),
    onSuccess: (job) => {
      client.setQueryData(queryKeys.jobs.detail(job.id), job);
      void client.invalidateQueries({ queryKey: queryKeys.jobs.all });
    },
  });
}

/** One prompt to several agents; the jobs go into the cache for the Compare view that opens next. */
export function useLaunchMany() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: LaunchManyBody) => jobsApi.launchMany(body),
    onSuccess: ({ jobs }) => {
      for (const job of jobs) client.setQueryData(queryKeys.jobs.detail(job.id), job);
      void client.invalidateQueries({ queryKey: queryKeys.jobs.lists() });
      void client.invalidateQueries({ queryKey: queryKeys.jobs.active() });
    },
  });
}

export function useLaunchJob() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: LaunchJobBody) => jobsApi.launch(body),
    onSuccess: (job) => {
      client.setQueryData(queryKeys.jobs.detail(job.id), job);
      void client.invalidateQueries({ queryKey: queryKeys.jobs.lists() });
      void client.invalidateQueries({ queryKey: queryKeys.jobs.active() });
      if (job.followUpOf) void client.invalidateQueries({ queryKey: [...queryKeys.jobs.all, "thread"] });
      if (job.relaunchOf) void client.invalidateQueries({ queryKey: queryKeys.jobs.relaunches(job.relaunchOf) });
    },
  });
}

/**
 * A worktree job's change and diff; read again as the job moves on (its end commits what was left),
 * and every few seconds while it runs, so the diff so far grows with its work.
 */
export function useJobChanges(job: Job) {
  return useQuery({
    queryKey: [...queryKeys.jobs.changes(job.id), job.status, job.worktree?.state],
    queryFn: ({ signal }) => jobsApi.changes(job.id, signal),
    enabled: readsChanges(job),
    refetchInterval: isFinalStatus(job.status) ? false : POLL_SLOW,
  });
}

/** What Merge or Discard answered: the job with its worktree's new state, and what went with a discarded branch. */
export type WorktreeActionResult = { action: "merge"; job: Job } | { action: "discard"; job: Job; discarded: DiscardResult };

/** Merges (what was reviewed: `head`) or discards a worktree job's branch; the job comes back with its worktree's new state. */
export function useWorktreeAction() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async ({ id, action, head }: { id: string; action: "merge" | "discard"; head?: string }): Promise<WorktreeActionResult> => {
      if (action === "merge") return { action, job: (await jobsApi.merge(id, head)).job };
      const { job, ...discarded } = await jobsApi.discard(id);
      return { action, job, discarded };
    },
    onSuccess: ({ job }) => {
      client.setQueryData(queryKeys.jobs.detail(job.id), job);
      void client.invalidateQueries({ queryKey: queryKeys.jobs.all });
    },
  });
}
