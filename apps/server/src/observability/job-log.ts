import type { AuditEntry, Job, JobStatus } from "@corral/shared";
import { isFinalStatus } from "@corral/shared";
import type { FastifyBaseLogger } from "fastify";
import type { JobEvents } from "../jobs/job-events.js";
import type { AuditService } from "../audit/service.js";

/**
 * The one place job lifecycle lines are logged, from the services' events: launched, started,
 * ended (status, exit code, duration), and who launched or cancelled. Every line carries `jobId`.
 * Prompts, output and error texts stay out: they are the user's data and may quote secrets.
 */
export function attachJobLog(jobs: JobEvents, audit: AuditService, log: FastifyBaseLogger): () => void {
  /** Last status seen of jobs not yet ended; ended jobs are forgotten, so this stays small. */
  const seen = new Map<string, JobStatus>();
  const onJob = (job: Job) => {
    const previous = seen.get(job.id);
    if (previous === job.status) return;
    const base = { jobId: job.id, agent: job.agent, status: job.status, attempt: job.attempt };
    if (isFinalStatus(job.status)) {
      seen.delete(job.id);
      const started = job.startedAt ?? job.createdAt;
      const durationMs = job.endedAt !== null ? job.endedAt - started : null;
      log.info({ ...base, exitCode: job.exitCode, durationMs }, `job ${job.id} ended: ${job.status}`);
      return;
    }
    seen.set(job.id, job.status);
    if (job.status === "queued" && previous === undefined) log.info({ ...base, origin: job.origin }, `job ${job.id} launched`);
    else if (job.status === "running") log.info({ ...base, pid: job.pid }, `job ${job.id} started`);
    else log.info(base, `job ${job.id} is ${job.status}`);
  };
  const onAudit = (entry: AuditEntry) => {
    log.info(
      { jobId: entry.jobId, agent: entry.agent, action: entry.action, door: entry.door, client: entry.client },
      `job ${entry.jobId} ${entry.action === "launch" ? "launch" : "cancel"} requested`,
    );
  };
  jobs.on("job", onJob);
  audit.on("recorded", onAudit);
  return () => {
    jobs.off("job", onJob);
    audit.off("recorded", onAudit);
  };
}
