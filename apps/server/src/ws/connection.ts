import {
  ClientMessageSchema,
  fieldIssues,
  outputHead,
  type ClientMessage,
  type ConfigFileStatus,
  type Job,
  type OutputStream,
  type ServerMessage,
  type WsConnectionStats,
} from "@corral/shared";
import type { FastifyBaseLogger } from "fastify";
import WebSocket from "ws";
import { ServiceError } from "../lib/errors.js";
import type { Services } from "../services.js";
import { ConversationStream } from "./conversation-stream.js";
import { JobStream } from "./job-stream.js";
import type { StreamSink, Turn } from "./stream-sink.js";

/**
 * Bytes a connection may have queued (handed to the socket, not yet written to the kernel)
 * before its streams stop sending live and switch to catching up from the log. What the server
 * holds for a client is this plus one message, however many streams it follows.
 */
export const SEND_BUFFER_CAP = 1024 * 1024;
/** Catch-up turns are given only while the queue is below this. */
const LOW_WATER = SEND_BUFFER_CAP / 2;
/** A client that lets this much pile up (only small control messages can) is cut off. */
const HARD_CAP = 8 * SEND_BUFFER_CAP;
const MAX_STREAMS = 200;
const MAX_CONVERSATIONS = 50;

/**
 * One WebSocket client: its subscriptions, and a send queue that never grows past the cap.
 * Every byte given to `socket.send` is counted until ws reports it written, so the count is
 * exact whatever ws and the socket buffer inside; catch-up pages go out one stream at a time.
 */
export class Connection implements StreamSink {
  private jobList = false;
  /** Job-list updates held while the socket is backed up; only each job's latest matters. */
  private heldJobs = new Map<string, Job>();
  private flushingJobs = false;
  private configFile = false;
  /** The config file's latest state, held while the socket is backed up; only the latest matters. */
  private heldConfigFile: ConfigFileStatus | null = null;
  /** The client's messages being handled, in the order they came. */
  private handling: Promise<void> = Promise.resolve();
  private streams = new Map<string, JobStream>();
  private conversations = new Map<string, ConversationStream>();
  private queued = 0;
  private peak = 0;
  private catchUps = 0;
  /** Streams (and the job list) waiting for room to send, served in turn. */
  private waiters: Turn[] = [];
  private granting = false;

  constructor(
    readonly id: number,
    private readonly socket: WebSocket,
    private readonly services: Services,
    private readonly log: FastifyBaseLogger,
  ) {
    socket.on("message", (data, isBinary) => {
      try {
        this.receive(isBinary ? null : data.toString());
      } catch (err) {
        // A throw here would escape ws's socket handler and end the process with every job in it.
        this.failed(err, "your message");
      }
    });
    socket.on("close", () => this.closed());
    socket.on("error", () => socket.terminate());
  }

  private get open(): boolean {
    return this.socket.readyState === WebSocket.OPEN;
  }

  send(message: ServerMessage): void {
    // Bytes, not a string: ws would queue a string as is and Node copy it again when writing.
    this.write([Buffer.from(JSON.stringify(message))]);
  }

  /**
   * The head line and the text go out as two fragments of one text message, so the text is sent
   * as it lies in the log (or as it was captured): never escaped into JSON, never copied.
   */
  sendOutput(jobId: string, stream: OutputStream, data: Buffer, cursor: number): void {
    this.write([Buffer.from(outputHead({ jobId, stream, cursor })), data]);
  }

  /** Sends the fragments of one message, each counted until ws reports the message written. */
  private write(fragments: Buffer[]): void {
    if (!this.open) return;
    const bytes = fragments.reduce((sum, f) => sum + f.length, 0);
    this.queued += bytes;
    if (this.queued > this.peak) this.peak = this.queued;
    fragments.forEach((data, i) => {
      const fin = i === fragments.length - 1;
      // Called once the frame is written to the kernel, or with an error when the socket is gone.
      const written = fin
        ? () => {
            this.queued -= bytes;
            this.grant();
          }
        : undefined;
      this.socket.send(data, { binary: false, fin }, written);
    });
    if (this.queued > HARD_CAP) this.socket.terminate();
  }

  congested(): boolean {
    return this.queued > SEND_BUFFER_CAP;
  }

  whenRoom(turn: Turn): void {
    if (!this.open) {
      void turn(false);
      return;
    }
    this.waiters.push(turn);
    this.grant();
  }

  /**
   * Gives turns, one waiter at a time and each sending before the next is asked, while the
   * queue is low: 32 streams cannot each add a page on the same drain. A waiter that wants
   * another turn queues again behind the others.
   */
  private grant(): void {
    if (this.granting) return;
    this.granting = true;
    let reading: Promise<void> | undefined;
    try {
      while (!reading && this.queued <= LOW_WATER && this.open) {
        const turn = this.waiters.shift();
        if (!turn) break;
        reading = turn(true) ?? undefined;
      }
    } finally {
      if (!reading) this.granting = false;
    }
    // The turn reads the registry before it sends: the next one waits until it has sent.
    const next = () => {
      this.granting = false;
      this.grant();
    };
    reading?.then(next, next);
  }

  caughtBehind(): void {
    this.catchUps++;
  }

  stats(): WsConnectionStats {
    return {
      id: this.id,
      jobList: this.jobList,
      streams: [...this.streams.keys()],
      bufferedBytes: this.queued,
      peakBufferedBytes: this.peak,
      catchUps: this.catchUps,
    };
  }

  onJob(job: Job): void {
    if (this.jobList) {
      if (this.congested() || this.heldJobs.size) {
        this.heldJobs.delete(job.id);
        this.heldJobs.set(job.id, job);
        this.flushJobs();
      } else this.send({ type: "job", job });
    }
    this.streams.get(job.id)?.onJob(job);
  }

  onConfigFile(status: ConfigFileStatus): void {
    if (!this.configFile) return;
    if (!this.congested() && !this.heldConfigFile) return this.send({ type: "config_file", status });
    const waiting = this.heldConfigFile !== null;
    this.heldConfigFile = status;
    if (waiting) return;
    this.whenRoom((open) => {
      const held = this.heldConfigFile;
      this.heldConfigFile = null;
      if (open && held && this.configFile) this.send({ type: "config_file", status: held });
    });
  }

  streamFor(jobId: string): JobStream | undefined {
    return this.streams.get(jobId);
  }

  conversationFor(session: string): ConversationStream | undefined {
    return this.conversations.get(session);
  }

  close(): void {
    this.socket.close(1001, "server shutting down");
  }

  /** Serving one of this client's messages failed unexpectedly: it is told, and the connection stays. */
  failed(err: unknown, what: string, jobId?: string): void {
    this.log.error({ err, connection: this.id }, `WebSocket: handling ${what} failed`);
    this.send({ type: "error", jobId, message: `the server could not handle ${what}: ${errorText(err)}` });
  }

  /**
   * Delivering a live event failed: the stream's position is no longer known, so this one
   * connection is closed (1011) and the client resumes from its last cursor.
   */
  broken(err: unknown, what: string): void {
    this.log.error({ err, connection: this.id }, `WebSocket: delivering ${what} failed; closing the connection`);
    if (this.open) this.socket.close(1011, "internal error; reconnect and resume from your last cursor");
  }

  private flushJobs(): void {
    if (this.flushingJobs) return;
    this.flushingJobs = true;
    const turn: Turn = (open) => {
      try {
        // A job carries its prompt and answer: a burst of them is sent only as far as the cap.
        for (const [id, job] of this.heldJobs) {
          if (!open || this.congested()) break;
          this.heldJobs.delete(id);
          if (this.jobList) this.send({ type: "job", job });
        }
      } catch (err) {
        this.heldJobs.clear();
        this.broken(err, "the job list");
      }
      if (open && this.heldJobs.size) return this.whenRoom(turn);
      this.flushingJobs = false;
    };
    this.whenRoom(turn);
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
    const message = parsed.data;
    // One after another: a subscription that reads the registry is in place before the next message (its unsubscribe) is handled.
    this.handling = this.handling
      .then(() => this.handle(message))
      .catch((err: unknown) => this.failed(err, message.type, "jobId" in message ? message.jobId : undefined));
  }

  private async handle(message: ClientMessage): Promise<void> {
    switch (message.type) {
      case "subscribe_jobs":
        this.jobList = true;
        this.send({ type: "subscribed", topic: "jobs" });
        return;
      case "unsubscribe_jobs":
        this.jobList = false;
        this.heldJobs.clear();
        return;
      case "subscribe_config_file":
        this.configFile = true;
        this.send({ type: "config_file", status: this.services.configFile.status() });
        return;
      case "unsubscribe_config_file":
        this.configFile = false;
        this.heldConfigFile = null;
        return;
      case "unsubscribe_job":
        this.streams.get(message.jobId)?.stop();
        this.streams.delete(message.jobId);
        return;
      case "subscribe_job":
        return this.subscribeJob(message.jobId, message.cursor);
      case "subscribe_conversation":
        return this.subscribeConversation(message.session, message.cursor);
      case "unsubscribe_conversation":
        this.conversations.get(message.session)?.stop();
        this.conversations.delete(message.session);
        return;
    }
  }

  private async subscribeJob(jobId: string, cursor: number): Promise<void> {
    const found = await this.services.jobs.find(jobId);
    if (!found) return this.send({ type: "error", field: "jobId", jobId, message: `job ${jobId} not found` });
    if (!this.streams.has(jobId) && this.streams.size >= MAX_STREAMS) {
      return this.send({
        type: "error",
        field: "jobId",
        jobId,
        message: `at most ${MAX_STREAMS} job streams per connection; unsubscribe from one first`,
      });
    }
    const { jobs, output, files } = this.services;
    // A runner's output stored while this server was down is copied before the cursor is checked
    // against the log and the log is read (a cursor another stream of it handed out may lie there).
    await output.caughtUp(found);
    try {
      output.outputFrom(jobId, cursor, 1);
    } catch (err) {
      if (err instanceof ServiceError && err.field === "cursor") return this.send({ type: "error", field: "cursor", jobId, message: err.message });
      throw err;
    }
    this.streams.get(jobId)?.stop();
    const source = {
      output: (from: number, limit: number) => output.outputFrom(jobId, from, limit),
      job: () => jobs.find(jobId),
      files: () => files.list(jobId),
    };
    const stream = new JobStream(jobId, cursor, source, this);
    this.streams.set(jobId, stream);
  }

  private subscribeConversation(session: string, cursor: number): void {
    if (!this.conversations.has(session) && this.conversations.size >= MAX_CONVERSATIONS) {
      return this.send({
        type: "error",
        field: "session",
        message: `at most ${MAX_CONVERSATIONS} conversations per connection; unsubscribe from one first`,
      });
    }
    this.conversations.get(session)?.stop();
    const hub = this.services.conversations;
    const source = {
      read: async (from: number, limit: number) => (await hub.read(session, undefined, from, limit)).messages,
      agents: () => hub.agents(session),
    };
    this.conversations.set(session, new ConversationStream(session, cursor, source, this));
  }

  private closed(): void {
    for (const wake of this.waiters.splice(0)) wake(false);
    for (const stream of this.streams.values()) stream.stop();
    this.streams.clear();
    for (const stream of this.conversations.values()) stream.stop();
    this.conversations.clear();
    this.heldJobs.clear();
    this.jobList = false;
    this.configFile = false;
    this.heldConfigFile = null;
  }
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));
