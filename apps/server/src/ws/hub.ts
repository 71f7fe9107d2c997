import type { Job } from "@corral/shared";
import type WebSocket from "ws";
import type { FileEvent } from "../jobs/file-watcher.js";
import type { OutputEvent } from "../jobs/service.js";
import type { Services } from "../services.js";
import { Connection, SEND_BUFFER_CAP, type ConnectionStats } from "./connection.js";

export interface HubStats {
  /** Bytes a connection may queue before its streams switch to catching up. */
  sendBufferCap: number;
  connections: ConnectionStats[];
}

/** Every WebSocket connection, fed from the job service's and the file watcher's events. */
export class WsHub {
  private connections = new Map<number, Connection>();
  private nextId = 1;
  private readonly onJob = (job: Job) => {
    for (const c of this.connections.values()) c.onJob(job);
  };
  private readonly onOutput = (event: OutputEvent) => {
    for (const c of this.connections.values()) c.streamFor(event.jobId)?.onOutput(event);
  };
  private readonly onFile = (event: FileEvent) => {
    for (const c of this.connections.values()) c.streamFor(event.jobId)?.onFile(event.file);
  };

  constructor(private readonly services: Services) {
    services.jobs.on("job", this.onJob);
    services.jobs.on("output", this.onOutput);
    services.files.on("file", this.onFile);
  }

  connect(socket: WebSocket): void {
    const id = this.nextId++;
    this.connections.set(id, new Connection(id, socket, this.services));
    socket.once("close", () => this.connections.delete(id));
  }

  stats(): HubStats {
    return { sendBufferCap: SEND_BUFFER_CAP, connections: [...this.connections.values()].map((c) => c.stats()) };
  }

  close(): void {
    this.services.jobs.off("job", this.onJob);
    this.services.jobs.off("output", this.onOutput);
    this.services.files.off("file", this.onFile);
    for (const c of this.connections.values()) c.close();
    this.connections.clear();
  }
}
