import type { FastifyBaseLogger } from "fastify";
import { ANSWER_CHANNEL, type ChannelListener, FILES_CHANGED, JOB_CHANNEL, listen } from "../db/pg/job-changes.js";
import type { Services } from "../services.js";
import { noticeQueue } from "./notice-queue.js";

/** Distinct payloads waiting to be read, at most. */
const MAX_PENDING = 10_000;

/**
 * The server hears runners on one connection of its own. What they store (NOTIFY on JOB_CHANNEL)
 * is told as its own changes: a job's change, its output (copied into the server's log), its file
 * changes. Their answers to its browsing requests (ANSWER_CHANNEL) wake the request waiting for
 * one at once. Loaded only with a registry in PostgreSQL (the pg driver comes with it).
 */
export function hearRunners(url: string, services: Services, log: FastifyBaseLogger): Promise<ChannelListener> {
  // Any login may NOTIFY on these channels: a payload is believed only for a job for runners, never
  // this server's own (announcing a job's whole file list is up to 10,000 events, on every NOTIFY).
  const told = async (payload: string) => {
    if (payload.endsWith(FILES_CHANGED)) {
      const id = payload.slice(0, -FILES_CHANGED.length);
      if (await services.remoteJobs.forRunners(id)) await services.files.announceStored(id);
      return;
    }
    // A job ended: its stored file changes again, in case a notification of them was missed.
    if ((await services.remoteJobs.heardFromRunner(payload)) === "ended") await services.files.announceStored(payload);
  };
  return listen(
    url,
    {
      // In the order heard: a job's output is copied before its end is told.
      [JOB_CHANNEL]: noticeQueue(told, {
        max: MAX_PENDING,
        onError: (err, payload) => log.warn({ err, payload }, "could not read what a runner stored"),
        onDrop: (dropped) => {
          if (dropped % MAX_PENDING === 1) log.warn({ dropped }, "runners' notifications arrive faster than they can be read; dropping some");
        },
      }),
      [ANSWER_CHANNEL]: (requestId) => services.workdirs.answered(requestId),
    },
    (err) => log.warn({ err }, "lost the connection that hears of runners' jobs and answers; connecting again"),
  );
}
