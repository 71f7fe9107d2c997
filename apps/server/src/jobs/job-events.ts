import { EventEmitter } from "node:events";
import type { Job, OutputStream } from "@corral/shared";

export interface OutputEvent {
  jobId: string;
  stream: OutputStream;
  /** UTF-8, whole characters: sent on as it is. */
  data: Buffer;
  /** Where the next read starts after this chunk. */
  cursor: number;
}

export interface JobEventMap {
  /** A job was created or changed (status, usage); the row is already stored. */
  job: [Job];
  /** New output, already in the job's log. */
  output: [OutputEvent];
}

/**
 * What happens to jobs, told only once it is stored (see JobStore): the WebSocket, waits, the
 * metrics, MCP's kept answers and a runner's outbox listen here.
 */
export class JobEvents extends EventEmitter<JobEventMap> {
  constructor() {
    super();
    // One listener per WebSocket connection and per wait: there is no fixed number to warn past.
    this.setMaxListeners(0);
  }
}
