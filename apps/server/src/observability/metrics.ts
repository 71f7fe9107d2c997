import { isFinalStatus, JobStatusSchema, type Job } from "@corral/shared";
import type { JobStatsRepo } from "../db/registry.js";
import type { JobEngine } from "../jobs/engine.js";
import type { JobEvents } from "../jobs/job-events.js";

/** Upper bounds (seconds) of the job duration buckets: from quick tools to hour-long agents. */
const DURATION_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200];

interface Histogram {
  buckets: number[];
  sum: number;
  count: number;
}

/** Extra samples other parts of the server own (the guard's counters). */
export interface ExtraSamples {
  authFailures: number;
  authRejected: number;
}

const escapeLabel = (v: string) => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
const labels = (pairs: Record<string, string>) =>
  `{${Object.entries(pairs)
    .map(([k, v]) => `${k}="${escapeLabel(v)}"`)
    .join(",")}}`;

/**
 * Prometheus text exposition (format 0.0.4), written by hand: jobs by status from the registry,
 * queue depth, durations of jobs that ended since start, and the process's memory.
 */
export class Metrics {
  /** Keyed by agent and final status; bounded by agents × statuses. */
  private durations = new Map<string, { agent: string; status: string; h: Histogram }>();
  private readonly onJob = (job: Job) => {
    if (!isFinalStatus(job.status) || job.startedAt === null || job.endedAt === null) return;
    const key = `${job.agent}\u0000${job.status}`;
    let entry = this.durations.get(key);
    if (!entry) {
      entry = { agent: job.agent, status: job.status, h: { buckets: DURATION_BUCKETS.map(() => 0), sum: 0, count: 0 } };
      this.durations.set(key, entry);
    }
    const seconds = Math.max(0, job.endedAt - job.startedAt) / 1000;
    for (const [i, bound] of DURATION_BUCKETS.entries()) {
      if (seconds <= bound) entry.h.buckets[i] = (entry.h.buckets[i] ?? 0) + 1;
    }
    entry.h.sum += seconds;
    entry.h.count++;
  };

  constructor(
    private readonly events: JobEvents,
    private readonly queues: Pick<JobEngine, "queuedCount">,
    private readonly stats: JobStatsRepo,
  ) {
    events.on("job", this.onJob);
  }

  dispose(): void {
    this.events.off("job", this.onJob);
  }

  async render(extra: ExtraSamples): Promise<string> {
    const out: string[] = [];
    const metric = (name: string, type: string, help: string) => out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);

    metric("corral_jobs", "gauge", "Jobs in the registry by status.");
    const byStatus = await this.stats.countByStatus();
    for (const status of JobStatusSchema.options) out.push(`corral_jobs${labels({ status })} ${byStatus[status] ?? 0}`);

    metric("corral_queue_depth", "gauge", "Jobs waiting in the queues for a free slot.");
    out.push(`corral_queue_depth ${this.queues.queuedCount()}`);

    metric("corral_job_duration_seconds", "histogram", "Run time of jobs that ended since the server started, by agent and final status.");
    for (const { agent, status, h } of this.durations.values()) {
      for (const [i, bound] of DURATION_BUCKETS.entries()) {
        out.push(`corral_job_duration_seconds_bucket${labels({ agent, status, le: String(bound) })} ${h.buckets[i]}`);
      }
      out.push(`corral_job_duration_seconds_bucket${labels({ agent, status, le: "+Inf" })} ${h.count}`);
      out.push(`corral_job_duration_seconds_sum${labels({ agent, status })} ${h.sum}`);
      out.push(`corral_job_duration_seconds_count${labels({ agent, status })} ${h.count}`);
    }

    metric("corral_auth_failures_total", "counter", "Requests with a wrong token since start.");
    out.push(`corral_auth_failures_total ${extra.authFailures}`);
    metric("corral_auth_rate_limited_total", "counter", "Requests answered 429 because their address sent too many wrong tokens.");
    out.push(`corral_auth_rate_limited_total ${extra.authRejected}`);

    const memory = process.memoryUsage();
    metric("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
    out.push(`process_resident_memory_bytes ${memory.rss}`);
    metric("nodejs_heap_used_bytes", "gauge", "V8 heap in use, in bytes.");
    out.push(`nodejs_heap_used_bytes ${memory.heapUsed}`);
    metric("process_start_time_seconds", "gauge", "Start time of the process since the Unix epoch, in seconds.");
    out.push(`process_start_time_seconds ${Math.round(Date.now() / 1000 - process.uptime())}`);
    return `${out.join("\n")}\n`;
  }
}
