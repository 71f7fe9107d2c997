import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { OUTPUT_PAGE_BYTES, type JobOutputRepo } from "../../db/registry.js";
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "../../lib/private-files.js";
import { OutputLog } from "../output-log.js";
import type { OutputEvent } from "../job-events.js";
import { jobDataPaths } from "../worker-process.js";

/** Chunks read from the registry at a time. */
const PAGE = 500;

/** The last chunk copied, in the job's data dir: a restarted server goes on from there. */
const COPIED_FILE = "runner-output.seq";

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
    const seqFile = path.join(paths.dir, COPIED_FILE);
    let seq = this.copied.get(jobId) ?? readSeq(seqFile);
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
          const cursor = log.append(row.stream, data);
          seq = row.seq;
          this.told({ jobId, stream: row.stream, data, cursor });
        }
      } finally {
        log.close();
        writeFileSync(seqFile, String(seq), { mode: PRIVATE_FILE_MODE });
        this.copied.set(jobId, seq);
      }
      // A page cut short by its size is not the last.
      if (rows.length < PAGE && bytes < OUTPUT_PAGE_BYTES) return;
    }
  }

  /** The job has ended and its output is copied: its place is kept in its data dir only. */
  forget(jobId: string): void {
    this.copied.delete(jobId);
  }
}

function readSeq(file: string): number {
  try {
    const seq = Number(readFileSync(file, "utf8"));
    return Number.isInteger(seq) && seq > 0 ? seq : 0;
  } catch {
    return 0;
  }
}
