import type { Job, JobFile, JobStatus } from "@corral/shared";
import type { OutputEvent } from "../jobs/service.js";
import { readOutput } from "../jobs/output-log.js";
import type { StreamSink } from "./connection.js";

/** Bytes of log read per catch-up step. */
export const PAGE_BYTES = 256 * 1024;
/** Stored files sent per `files` message when a stream starts. */
const FILES_BATCH = 500;

export interface JobStreamSource {
  logFile: string;
  files(): JobFile[];
}

/**
 * One job followed by one connection. It is either catching up — reading the output log from
 * its cursor, one page at a time and only when the socket has room — or live, forwarding each
 * event as it comes. Output events carry their cursor, so the hand-over cannot skip or repeat:
 * catch-up ends in the same tick as the read that found the log's end, and every later event
 * lies past that end. A live stream whose socket backs up goes back to catching up, so a slow
 * client costs a page of memory, not its backlog.
 */
export class JobStream {
  private live = false;
  private running = false;
  private stopped = false;
  private filesSent = false;
  private lastStatus: JobStatus;
  private lastUsage: string;
  /** Held while catching up; only the latest of each matters. */
  private heldJob: Job | null = null;
  private heldFiles = new Map<string, JobFile>();

  constructor(
    readonly jobId: string,
    private cursor: number,
    job: Job,
    private readonly source: JobStreamSource,
    private readonly sink: StreamSink,
  ) {
    this.lastStatus = job.status;
    this.lastUsage = JSON.stringify(job.usage);
    sink.send({ type: "status", jobId, job });
    this.catchUp();
  }

  stop(): void {
    this.stopped = true;
  }

  onOutput(event: OutputEvent): void {
    if (this.stopped || !this.live || event.cursor <= this.cursor) return;
    if (this.sink.congested()) return this.catchUp();
    this.sink.send({ type: "output", jobId: this.jobId, stream: event.stream, text: event.text, cursor: event.cursor });
    this.cursor = event.cursor;
  }

  onJob(job: Job): void {
    if (this.stopped) return;
    if (!this.live || this.sink.congested()) {
      this.heldJob = job;
      return this.catchUp();
    }
    this.deliverJob(job);
  }

  onFile(file: JobFile): void {
    if (this.stopped) return;
    if (!this.live || this.sink.congested()) {
      this.heldFiles.delete(file.path); // keep the order of last changes
      this.heldFiles.set(file.path, file);
      return this.catchUp();
    }
    this.sink.send({ type: "file", jobId: this.jobId, file });
  }

  private deliverJob(job: Job): void {
    if (job.status !== this.lastStatus) {
      this.lastStatus = job.status;
      this.sink.send({ type: "status", jobId: this.jobId, job });
    }
    const usage = JSON.stringify(job.usage);
    if (usage !== this.lastUsage) {
      this.lastUsage = usage;
      this.sink.send({ type: "usage", jobId: this.jobId, usage: job.usage });
    }
  }

  private catchUp(): void {
    this.live = false;
    if (this.running) return;
    this.running = true;
    this.sink.caughtBehind();
    void this.run()
      .catch((err: unknown) => {
        this.stopped = true;
        this.sink.failed(err, `the stream of job ${this.jobId} (it stopped; subscribe again to resume)`, this.jobId);
      })
      .finally(() => {
        this.running = false;
      });
  }

  private async run(): Promise<void> {
    if (!this.filesSent) {
      const files = this.source.files();
      for (let i = 0; i < files.length; i += FILES_BATCH) {
        if (!(await this.sink.drained()) || this.stopped) return;
        this.sink.send({ type: "files", jobId: this.jobId, files: files.slice(i, i + FILES_BATCH) });
      }
      this.filesSent = true;
    }
    for (;;) {
      if (!(await this.sink.drained()) || this.stopped) return;
      // From this read to going live nothing else runs, so no event can fall in between.
      const page = readOutput(this.source.logFile, this.cursor, PAGE_BYTES);
      if (!page.chunks.length || page.cursor === this.cursor) {
        this.live = true;
        for (const file of this.heldFiles.values()) this.sink.send({ type: "file", jobId: this.jobId, file });
        this.heldFiles.clear();
        if (this.heldJob) this.deliverJob(this.heldJob);
        this.heldJob = null;
        this.sink.send({ type: "caught_up", jobId: this.jobId, cursor: this.cursor });
        return;
      }
      for (const chunk of page.chunks) {
        this.sink.send({ type: "output", jobId: this.jobId, stream: chunk.stream, text: chunk.text, cursor: chunk.cursor });
      }
      this.cursor = page.cursor;
    }
  }
}
