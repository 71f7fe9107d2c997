import type { ConfigFileStatus, HubMessage, Job, WsStats } from "@corral/shared";
import type { FastifyBaseLogger } from "fastify";
import type WebSocket from "ws";
import type { FileEvent } from "../jobs/file-watcher.js";
import type { OutputEvent } from "../jobs/job-events.js";
import type { Services } from "../services.js";
import { Connection, SEND_BUFFER_CAP } from "./connection.js";

/**
 * Every WebSocket connection, fed from the job events (JobEvents) and the file watcher's. Those
 * events are emitted from inside the job driver, so a failure to deliver one to a client is
 * kept to that client: it must never reach the worker loop (an Ollama job runs in-process).
 */
export class WsHub {
  private connections = new Map<number, Connection>();
  private nextId = 1;
  private refused = 0;
  private readonly onJob = (job: Job) => this.each((c) => c.onJob(job), "a job update");
  private readonly onOutput = (event: OutputEvent) => this.each((c) => c.streamFor(event.jobId)?.onOutput(event), "job output");
  private readonly onFile = (event: FileEvent) => this.each((c) => c.streamFor(event.jobId)?.onFile(event.file), "a file event");
  private readonly onMessage = (m: HubMessage) => this.each((c) => c.conversationFor(m.session)?.onMessage(m), "a conversation message");
  private readonly onAgents = (session: string) => this.each((c) => c.conversationFor(session)?.agentsChanged(), "a conversation's agents");
  private readonly onConfigFile = (status: ConfigFileStatus) => this.each((c) => c.onConfigFile(status), "the config file's state");

  constructor(
    private readonly services: Services,
    private readonly log: FastifyBaseLogger,
  ) {
    services.jobEvents.on("job", this.onJob);
    services.jobEvents.on("output", this.onOutput);
    services.files.on("file", this.onFile);
    services.conversations.on("message", this.onMessage);
    services.conversations.on("agents", this.onAgents);
    services.configFile.on("status", this.onConfigFile);
  }

  private each(deliver: (c: Connection) => void, what: string): void {
    for (const c of this.connections.values()) {
      try {
        deliver(c);
      } catch (err) {
        c.broken(err, what);
      }
    }
  }

  /** Takes a new socket, or closes it with 1013 (try again later) when the server is full. */
  connect(socket: WebSocket): void {
    const max = this.services.config.wsMaxConnections;
    if (this.connections.size >= max) {
      this.refused++;
      // Close reasons are capped at 123 bytes; a browser shows this one in its close event.
      socket.close(1013, `too many WebSocket connections (${max}); close one or raise CORRAL_WS_MAX_CONNECTIONS`);
      return;
    }
    const id = this.nextId++;
    this.connections.set(id, new Connection(id, socket, this.services, this.log));
    socket.once("close", () => this.connections.delete(id));
  }

  stats(): WsStats {
    const connections = [...this.connections.values()].map((c) => c.stats());
    return {
      sendBufferCap: SEND_BUFFER_CAP,
      maxConnections: this.services.config.wsMaxConnections,
      bufferedBytes: connections.reduce((sum, c) => sum + c.bufferedBytes, 0),
      refused: this.refused,
      connections,
    };
  }

  close(): void {
    this.services.jobEvents.off("job", this.onJob);
    this.services.jobEvents.off("output", this.onOutput);
    this.services.files.off("file", this.onFile);
    this.services.conversations.off("message", this.onMessage);
    this.services.conversations.off("agents", this.onAgents);
    this.services.configFile.off("status", this.onConfigFile);
    for (const c of this.connections.values()) c.close();
    this.connections.clear();
  }
}
