import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { OUTPUT_PAGE_BYTES, type JobOutputRepo } from "../../db/registry.js";
import { PRIVATE_DIR_MODE } from "../../lib/private-files.js";
import { lastCopiedSeq, OutputLog } from "../output-log.js";
import type { OutputEvent } from "../job-events.js";
import { jobDataPaths } from "../worker-process.js";

/** Chunks read from the registry at a time. */
const PAGE = 500;

/** Where servers before the log's own seq (`r`) kept the last chunk copied, in the job's data dir. */
const LEGACY_COPIED_FILE = "runner-output.seq";

/**
 * Copies the output a runner stored for a job (job_output) into this server's own output log of
 * that job, in order and once each, telling each chunk as its own jobs' output is told: reads by
 * cursor, tails, the Readable view and the WebSocket then work for runners' jobs as for its own.
 */
export class RunnerOutputCopy {
  /** The last chunk copied of jobs heard of since start. */
  private readonly copied = new Map<string, number>();

  constructor(
    private readonly repo: Pick<JobOutputRepo, "after">,
    private readonly dataDir: string,
    private readonly told: (event: OutputEvent) => void,
  ) {}

  /** Copies in progress, by job: a copy asked for while one runs follows it, so no chunk is appended twice. */
  private readonly running = new Map<string, Promise<void>>();

  /** Copies every chunk of the job not copied yet. */
  copy(jobId: string): Promise<void> {
    const previous = this.running.get(jobId) ?? Promise.resolve();
    const next = previous.then(() => this.copyNow(jobId));
    const settled = next.catch(() => undefined);
    this.running.set(jobId, settled);
    void settled.then(() => {
      if (this.running.get(jobId) === settled) this.running.delete(jobId);
    });
    return next;
  }

  private async copyNow(jobId: string): Promise<void> {
    const paths = jobDataPaths(this.dataDir, jobId);
    let seq = this.copied.get(jobId) ?? lastCopied(paths.log, path.join(paths.dir, LEGACY_COPIED_FILE));
    for (;;) {
      const rows = await this.repo.after(jobId, seq, PAGE);
      if (!rows.length) return;
      mkdirSync(paths.dir, { recursive: true, mode: PRIVATE_DIR_MODE });
      const log = new OutputLog(paths.log);
      let bytes = 0;
      try {
        for (const row of rows) {
          const data = Buffer.from(row.data, "utf8");
          bytes += data.length;
          // The chunk's seq goes in its record, written with it: a server killed at any point
          // resumes after the last chunk its log holds. (A mark kept apart from the log, written
          // after it, could lag it or be found empty, and the chunks past it were copied again.)
          const cursor = log.append(row.stream, data, { seq: row.seq });
          seq = row.seq;
          this.told({ jobId, stream: row.stream, data, cursor });
        }
      } finally {
        log.close();
        this.copied.set(jobId, seq);
      }
      // A page cut short by its size is not the last.
      if (rows.length < PAGE && bytes < OUTPUT_PAGE_BYTES) return;
    }
  }

  /** The job has ended and its output is copied: its place is kept in its log only. */
  forget(jobId: string): void {
    this.copied.delete(jobId);
  }
}

/** The last chunk in the log; a log copied by an earlier server without any has its mark in `legacyFile`. */
function lastCopied(log: string, legacyFile: string): number {
  const inLog = lastCopiedSeq(log);
  if (inLog > 0) return inLog;
  try {
    const seq = Number(readFileSync(legacyFile, "utf8"));
    return Number.isInteger(seq) && seq > 0 ? seq : 0;
  } catch {
    return 0;
  }
}
