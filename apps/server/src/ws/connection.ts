import { ClientMessageSchema, fieldIssues, type ClientMessage, type Job, type ServerMessage } from "@corral/shared";
import WebSocket from "ws";
import { CursorError, readOutput } from "../jobs/output-log.js";
import { jobFiles } from "../jobs/worker-process.js";
import type { Services } from "../services.js";
import { JobStream } from "./job-stream.js";

/**
 * Bytes a connection may have queued before its streams stop sending live and switch to
 * catching up from the log. What the server holds for a client is this plus one message.
 */
export const SEND_BUFFER_CAP = 1024 * 1024;
/** Catch-up sends a page only once the queue is down to this. */
const LOW_WATER = SEND_BUFFER_CAP / 2;
/** A client that lets this much pile up (only small control messages can) is cut off. */
const HARD_CAP = 8 * SEND_BUFFER_CAP;
const DRAIN_POLL_MS = 20;
const MAX_STREAMS = 200;

/** What a job stream needs from its connection. */
export interface StreamSink {
  send(message: ServerMessage): void;
  congested(): boolean;
  /** Resolves true once the queue is short enough for a page; false if the connection closed. */
  drained(): Promise<boolean>;
  /** A stream went back to catching up (counted for /api/ws/stats). */
  caughtBehind(): void;
}

export interface ConnectionStats {
  id: number;
  jobList: boolean;
  streams: string[];
  bufferedBytes: number;
  peakBufferedBytes: number;
  catchUps: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One WebSocket client: its subscriptions, and a send queue that never grows past the cap. */
export class Connection implements StreamSink {
  private jobList = false;
  /** Job-list updates held while the socket is backed up; only each job's latest matters. */
  private heldJobs = new Map<string, Job>();
  private flushingJobs = false;
  private streams = new Map<string, JobStream>();
  private peak = 0;
  private catchUps = 0;

  constructor(
    readonly id: number,
    private readonly socket: WebSocket,
    private readonly services: Services,
  ) {
    socket.on("message", (data, isBinary) => this.receive(isBinary ? null : data.toString()));
    socket.on("close", () => this.closed());
    socket.on("error", () => socket.terminate());
  }

  private get open(): boolean {
    return this.socket.readyState === WebSocket.OPEN;
  }

  send(message: ServerMessage): void {
    if (!this.open) return;
    this.socket.send(JSON.stringify(message));
    const buffered = this.socket.bufferedAmount;
    if (buffered > this.peak) this.peak = buffered;
    if (buffered > HARD_CAP) this.socket.terminate();
  }

  congested(): boolean {
    return this.socket.bufferedAmount > SEND_BUFFER_CAP;
  }

  async drained(): Promise<boolean> {
    // ws has no drain event of its own; polling only happens while a client is behind.
    while (this.open && this.socket.bufferedAmount > LOW_WATER) await sleep(DRAIN_POLL_MS);
    return this.open;
  }

  caughtBehind(): void {
    this.catchUps++;
  }

  stats(): ConnectionStats {
    return {
      id: this.id,
      jobList: this.jobList,
      streams: [...this.streams.keys()],
      bufferedBytes: this.socket.bufferedAmount,
      peakBufferedBytes: this.peak,
      catchUps: this.catchUps,
    };
  }

  onJob(job: Job): void {
    if (this.jobList) {
      if (this.congested() || this.heldJobs.size) {
        this.heldJobs.delete(job.id);
        this.heldJobs.set(job.id, job);
        void this.flushJobs();
      } else this.send({ type: "job", job });
    }
    this.streams.get(job.id)?.onJob(job);
  }

  streamFor(jobId: string): JobStream | undefined {
    return this.streams.get(jobId);
  }

  close(): void {
    this.socket.close(1001, "server shutting down");
  }

  private async flushJobs(): Promise<void> {
    if (this.flushingJobs) return;
    this.flushingJobs = true;
    try {
      while (this.heldJobs.size && (await this.drained())) {
        const jobs = [...this.heldJobs.values()];
        this.heldJobs.clear();
        for (const job of jobs) if (this.jobList) this.send({ type: "job", job });
      }
    } finally {
      this.flushingJobs = false;
    }
  }

  private receive(text: string | null): void {
    let data: unknown;
    try {
      if (text === null) throw new Error("binary");
      data = JSON.parse(text);
    } catch {
      return this.send({ type: "error", field: "(message)", message: "send one JSON object per text message" });
    }
    const parsed = ClientMessageSchema.safeParse(data);
    if (!parsed.success) {
      const [issue] = fieldIssues(parsed.error);
      return this.send({ type: "error", field: issue?.field, message: `invalid message: ${issue ? `${issue.field}: ${issue.message}` : "unknown"}` });
    }
    this.handle(parsed.data);
  }

  private handle(message: ClientMessage): void {
    switch (message.type) {
      case "subscribe_jobs":
        this.jobList = true;
        this.send({ type: "subscribed", topic: "jobs" });
        return;
      case "unsubscribe_jobs":
        this.jobList = false;
        this.heldJobs.clear();
        return;
      case "unsubscribe_job":
        this.streams.get(message.jobId)?.stop();
        this.streams.delete(message.jobId);
        return;
      case "subscribe_job":
        return this.subscribeJob(message.jobId, message.cursor);
    }
  }

  private subscribeJob(jobId: string, cursor: number): void {
    const job = this.services.jobs.find(jobId);
    if (!job) return this.send({ type: "error", field: "jobId", jobId, message: `job ${jobId} not found` });
    if (!this.streams.has(jobId) && this.streams.size >= MAX_STREAMS) {
      return this.send({ type: "error", field: "jobId", jobId, message: `at most ${MAX_STREAMS} job streams per connection; unsubscribe from one first` });
    }
    const logFile = jobFiles(this.services.config.dataDir, jobId).log;
    try {
      readOutput(logFile, cursor, 1);
    } catch (err) {
      if (err instanceof CursorError) return this.send({ type: "error", field: "cursor", jobId, message: err.message });
      throw err;
    }
    this.streams.get(jobId)?.stop();
    const stream = new JobStream(jobId, cursor, job, { logFile, files: () => this.services.files.list(jobId) }, this);
    this.streams.set(jobId, stream);
  }

  private closed(): void {
    for (const stream of this.streams.values()) stream.stop();
    this.streams.clear();
    this.heldJobs.clear();
    this.jobList = false;
  }
}
