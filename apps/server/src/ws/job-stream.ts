import type { Job, JobFile, JobStatus } from "@corral/shared";
import type { ByteChunk, OutputRecords } from "../jobs/output-log.js";
import type { OutputEvent } from "../jobs/job-events.js";
import type { StreamSink, Turn } from "./stream-sink.js";

/** Bytes of log read per catch-up step. */
export const PAGE_BYTES = 256 * 1024;
/** Stored files sent per `files` message when a stream starts. */
const FILES_BATCH = 500;

export interface JobStreamSource {
  /** Output records from a cursor (OutputReader.outputFrom). */
  output(cursor: number, limit: number): OutputRecords<ByteChunk>;
  /** The job as stored now. */
  job(): Promise<Job | undefined>;
  files(): Promise<JobFile[]>;
}

/**
 * One job followed by one connection. It is either catching up — sending its status, stored
 * files and the output log from its cursor, one piece per turn the connection grants it — or
 * live, forwarding each event as it comes. Output events carry their cursor, so the hand-over
 * cannot skip or repeat: catch-up ends in the same tick as the read that found the log's end,
 * and every later event lies past that end. A live stream whose socket backs up goes back to
 * catching up, so a slow client costs a page of memory, not its backlog.
 */
export class JobStream {
  private live = false;
  private running = false;
  private stopped = false;
  /** The first status goes out on the stream's first turn, like everything else it sends. */
  private statusSent = false;
  /** Stored files still to send, read at the first turn that needs them. */
  private storedFiles: JobFile[] | null = null;
  private lastStatus: JobStatus | null = null;
  private lastUsage = "";
  /**
   * Held while catching up; only the latest of each matters. Job events are shared by every
   * connection, so holding one costs nothing; the first status is read when it is sent, so a
   * stalled client following many finished jobs does not hold a copy of each job's answer.
   */
  private heldJob: Job | null = null;
  private heldFiles = new Map<string, JobFile>();

  constructor(
    readonly jobId: string,
    private cursor: number,
    private readonly source: JobStreamSource,
    private readonly sink: StreamSink,
  ) {
    this.catchUp();
  }

  stop(): void {
    this.stopped = true;
  }

  onOutput(event: OutputEvent): void {
    if (this.stopped || !this.live || event.cursor <= this.cursor) return;
    if (this.sink.congested()) return this.catchUp();
    this.sink.sendOutput(this.jobId, event.stream, event.data, event.cursor);
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
    this.sink.whenRoom(this.turn);
  }

  /** One piece of catch-up per turn; going live happens within the turn that found the log's end. */
  private readonly turn: Turn = (open) => {
    if (!open || this.stopped) {
      this.running = false;
      return;
    }
    return this.sendNext().then(
      (more) => {
        if (more) this.sink.whenRoom(this.turn);
      },
      (err: unknown) => {
        this.running = false;
        this.stopped = true;
        this.sink.failed(err, `the stream of job ${this.jobId} (it stopped; subscribe again to resume)`, this.jobId);
      },
    );
  };

  /**
   * Sends the next piece of catch-up (about a page at most); false when there is none left (then
   * it went live, in the same tick as the read of the log that found its end) or it was stopped.
   */
  private async sendNext(): Promise<boolean> {
    if (!this.statusSent) {
      // A status announced while the job was read is newer than the read.
      const read = this.heldJob ? undefined : await this.source.job();
      if (this.stopped) return this.halt();
      const job = this.heldJob ?? read;
      if (!job) throw new Error(`job ${this.jobId} is no longer in the registry`);
      // Other streams' live output may have filled the queue during the read (PostgreSQL's reads
      // take a while): the status waits for the next turn rather than go past the cap. (A status
      // is small: sent here, it keeps the queue within the cap and a message.)
      if (this.sink.congested()) {
        this.heldJob = job;
        return true;
      }
      this.heldJob = null;
      this.statusSent = true;
      this.lastStatus = job.status;
      this.lastUsage = JSON.stringify(job.usage);
      this.sink.send({ type: "status", jobId: this.jobId, job });
      return true;
    }
    if (!this.storedFiles) {
      this.storedFiles = await this.source.files();
      if (this.stopped) return this.halt();
      // Other streams' live output may have filled the queue during the read: what this turn was
      // granted for (a queue at most half full) no longer holds, so the files and the output wait
      // for the next turn rather than go past the cap.
      return true;
    }
    if (this.storedFiles.length) {
      this.sink.send({ type: "files", jobId: this.jobId, files: this.storedFiles.splice(0, FILES_BATCH) });
      return true;
    }
    if (this.heldFiles.size) {
      for (const [filePath, file] of [...this.heldFiles].slice(0, FILES_BATCH)) {
        this.heldFiles.delete(filePath);
        this.sink.send({ type: "file", jobId: this.jobId, file });
      }
      return true;
    }
    const page = this.source.output(this.cursor, PAGE_BYTES);
    if (!page.chunks.length || page.cursor === this.cursor) {
      this.running = false;
      this.goLive();
      return false;
    }
    for (const chunk of page.chunks) this.sink.sendOutput(this.jobId, chunk.stream, chunk.data, chunk.cursor);
    this.cursor = page.cursor;
    return true;
  }

  private halt(): false {
    this.running = false;
    return false;
  }

  /** The log's end was just read: the held status follows all output and files, then live events. */
  private goLive(): void {
    this.live = true;
    if (this.heldJob) this.deliverJob(this.heldJob);
    this.heldJob = null;
    this.sink.send({ type: "caught_up", jobId: this.jobId, cursor: this.cursor });
  }
}
