// The contract between a connection and the streams it holds (a job's, a conversation's): both
// sides import it, so a stream never imports the connection that creates it.
import type { OutputStream, ServerMessage } from "@corral/shared";

/** A stream's turn to send; one that reads the registry first answers a Promise, and the next turn waits for it. */
export type Turn = (open: boolean) => void | Promise<void>;

/** What a stream needs from its connection. */
export interface StreamSink {
  send(message: ServerMessage): void;
  /** A piece of a job's output as UTF-8, whole characters (see parseServerMessage in @corral/shared). */
  sendOutput(jobId: string, stream: OutputStream, data: Buffer, cursor: number): void;
  congested(): boolean;
  /**
   * Calls `turn(true)` once the queue is low and the waiters before it had their turn, to send
   * one piece (a page at most); `turn(false)` if the connection closed.
   */
  whenRoom(turn: Turn): void;
  /** A stream went back to catching up (counted for /api/ws/stats). */
  caughtBehind(): void;
  /** Something failed unexpectedly: the client is told (and the server log has it). */
  failed(err: unknown, what: string, jobId?: string): void;
}
