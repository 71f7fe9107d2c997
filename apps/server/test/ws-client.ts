import { isFinalStatus, parseServerMessage, type ClientMessage, type ServerMessage } from "@corral/shared";
import WebSocket from "ws";
import { until, type TestServer } from "./helpers.js";

/** A real WebSocket client on /api/ws that keeps every message it receives, validated. */
export class WsClient {
  readonly messages: ServerMessage[] = [];

  private constructor(readonly socket: WebSocket) {
    socket.on("message", (data) => this.messages.push(parseServerMessage(data.toString())));
  }

  static open(server: Pick<TestServer, "url" | "auth">, headers: Record<string, string> = server.auth): Promise<WsClient> {
    const socket = new WebSocket(`${server.url.replace(/^http/, "ws")}/api/ws`, { headers });
    return new Promise((resolve, reject) => {
      socket.once("open", () => resolve(new WsClient(socket)));
      socket.once("error", reject);
      socket.once("unexpected-response", (req, res) => {
        req.destroy();
        reject(new Error(`HTTP ${res.statusCode}`));
      });
    });
  }

  send(message: ClientMessage | Record<string, unknown>): void {
    this.socket.send(JSON.stringify(message));
  }

  of<T extends ServerMessage["type"]>(type: T, jobId?: string): Extract<ServerMessage, { type: T }>[] {
    return this.messages.filter(
      (m): m is Extract<ServerMessage, { type: T }> => m.type === type && (jobId === undefined || ("jobId" in m && m.jobId === jobId)),
    );
  }

  waitFor<T extends ServerMessage["type"]>(type: T, match: (m: Extract<ServerMessage, { type: T }>) => boolean = () => true, timeoutMs = 20_000) {
    return until(() => this.of(type).find(match), timeoutMs, `a ${type} message`);
  }

  /**
   * Resolves once the job's stream said it ended and has sent all its output: a job that ended
   * live gets its final status after its output; one that had ended before the subscription gets
   * it first, before catch-up, so `caught_up` (after the log's end) is waited for too.
   */
  async waitForEnd(jobId: string, timeoutMs = 30_000) {
    const end = await this.waitFor("status", (m) => m.jobId === jobId && isFinalStatus(m.job.status), timeoutMs);
    await this.waitFor("caught_up", (m) => m.jobId === jobId, timeoutMs);
    return end;
  }

  /** The output text received for a job, in order. */
  text(jobId: string): string {
    return this.of("output", jobId)
      .map((m) => m.text)
      .join("");
  }

  close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      this.socket.once("close", () => resolve());
      this.socket.close();
    });
  }
}
