import type { FastifyBaseLogger } from "fastify";
import { ANSWER_CHANNEL, FILES_CHANGED, type JobChangeListener, listenForJobChanges } from "../db/pg/job-changes.js";
import type { Services } from "../services.js";

/**
 * The server hears what runners store (NOTIFY on JOB_CHANNEL) and tells it as its own changes:
 * a job's change, its output (copied into the server's log), its file changes. Loaded only with a
 * registry in PostgreSQL (the pg driver comes with it).
 */
export function hearRunners(url: string, services: Services, log: FastifyBaseLogger): Promise<JobChangeListener> {
  // In the order heard: a job's output is copied before its end is told.
  let heard: Promise<void> = Promise.resolve();
  const told = async (payload: string) => {
    if (payload.endsWith(FILES_CHANGED)) {
      await services.files.announceStored(payload.slice(0, -FILES_CHANGED.length));
      return;
    }
    await services.jobs.heardFromRunner(payload);
    // A change to the job (not output): its stored file changes again, in case a notification was missed.
    if (!payload.includes(":")) await services.files.announceStored(payload);
  };
  return listenForJobChanges(
    url,
    (payload) => {
      heard = heard.then(() => told(payload)).catch((err: unknown) => log.warn({ err, payload }, "could not read what a runner stored"));
    },
    (err) => log.warn({ err }, "lost the connection that hears of runners' jobs; connecting again"),
  );
}

/** The server hears runners' answers to its browsing requests (NOTIFY on ANSWER_CHANNEL): the request waiting for one is woken at once. */
export function hearRunnerAnswers(url: string, services: Services, log: FastifyBaseLogger): Promise<JobChangeListener> {
  return listenForJobChanges(
    url,
    (requestId) => services.workdirs.answered(requestId),
    (err) => log.warn({ err }, "lost the connection that hears runners' answers to browsing requests; connecting again"),
    ANSWER_CHANNEL,
  );
}
