import { setTimeout as sleep } from "node:timers/promises";
import { isFinalStatus, parseServerMessage, type Job, type OutputStream } from "@corral/shared";
import WebSocket from "ws";
import { parseJson, refusal, serverMessage, unreachable } from "./client.js";
import { CliError, EXIT } from "./exit-codes.js";
import type { Target } from "./settings.js";

export interface OutputPiece {
  stream: OutputStream;
  text: string;
  /** Where the output continues after this piece. */
  cursor: number;
}

/** How long a follower keeps trying to reconnect after a drop (a server restart is quicker than this) before giving up. */
export const RECONNECT_FOR_MS = 60_000;
export const RETRY_MS = [100, 250, 500, 1000, 2000];

/**
 * Follows a job on the WebSocket until it ends, handing each piece of output to `onOutput` once, and
 * resolves with the ended job. A dropped connection is opened again and the stream resumed from the
 * last cursor received, so nothing is lost or repeated. With `storedOnly`, stops at the end of the
 * output stored so far, resolving with the job as it was then. `signal` stops following (the job
 * runs on): it rejects with StoppedWaiting.
 */
export async function followJob(
  target: Target,
  jobId: string,
  onOutput: (piece: OutputPiece) => void = () => {},
  storedOnly = false,
  signal?: AbortSignal,
): Promise<Job> {
  let cursor = 0;
  let everServed = false;
  let failures = 0;
  let failingSince: number | null = null;
  for (;;) {
    if (signal?.aborted) throw new StoppedWaiting(jobId);
    const result = await followOnce(
      target,
      jobId,
      cursor,
      storedOnly,
      (piece) => {
        cursor = piece.cursor;
        onOutput(piece);
      },
      signal,
    );
    if ("job" in result) return result.job;
    // No server at first is said at once; one that served this stream is waited for a while.
    if (!everServed && !result.served) throw unreachable(target, result.error);
    everServed = true;
    if (result.served) {
      failures = 0;
      failingSince = null;
    }
    failingSince ??= Date.now();
    if (Date.now() - failingSince > RECONNECT_FOR_MS) throw unreachable(target, result.error);
    await sleep(RETRY_MS[Math.min(failures++, RETRY_MS.length - 1)]);
  }
}

/** Following a job was stopped (Ctrl+C in `corral shell`); the job itself runs on. */
export class StoppedWaiting extends CliError {
  constructor(jobId: string) {
    super(`stopped waiting for job ${jobId}; it runs on`, EXIT.succeeded);
  }
}

/** `served`: the server answered the subscription before the connection went away. */
type Outcome = { job: Job } | { served: boolean; error: unknown };

/** One connection: resolves with the ended job, or with why the connection went away before it ended. */
function followOnce(
  target: Target,
  jobId: string,
  from: number,
  storedOnly: boolean,
  onOutput: (piece: OutputPiece) => void,
  signal: AbortSignal | undefined,
): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${target.url.replace(/^http/, "ws")}/api/ws`, { headers: { authorization: `Bearer ${target.token}` } });
    let served = false;
    let cursor = from;
    // The status sent at subscribe comes before the output it replays: the job has ended for this
    // follower only once the replay is over (`caught_up`), or when a final status arrives after it.
    let live = false;
    let latest: Job | null = null;
    let settled = false;
    const stop = () => settle(new StoppedWaiting(jobId));
    signal?.addEventListener("abort", stop, { once: true });
    const settle = (outcome: Outcome | CliError) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener("abort", stop);
      socket.removeAllListeners();
      socket.on("error", () => {});
      socket.terminate();
      if (outcome instanceof CliError) reject(outcome);
      else resolve(outcome);
    };
    socket.once("unexpected-response", (req, res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (body += d));
      res.on("close", () => {
        req.destroy();
        settle(refusal(target, res.statusCode ?? 0, parseJson(body)));
      });
    });
    socket.on("open", () => {
      socket.send(JSON.stringify({ type: "subscribe_job", jobId, cursor }));
    });
    socket.on("message", (data) => {
      served = true;
      let message: ReturnType<typeof parseServerMessage>;
      try {
        message = parseServerMessage(data.toString());
      } catch (err) {
        return settle(new CliError(`the server sent a message this corral does not understand (${(err as Error).message})`, EXIT.refused));
      }
      if ("jobId" in message && message.jobId !== undefined && message.jobId !== jobId) return;
      switch (message.type) {
        case "output":
          if (message.cursor <= cursor) return;
          cursor = message.cursor;
          onOutput({ stream: message.stream, text: message.text, cursor: message.cursor });
          return;
        case "status":
          latest = message.job;
          if (live && isFinalStatus(latest.status)) settle({ job: latest });
          return;
        case "caught_up":
          live = true;
          if (latest && (storedOnly || isFinalStatus(latest.status))) settle({ job: latest });
          return;
        case "error":
          return settle(new CliError(serverMessage(message.message, message.field), EXIT.refused));
        default:
          return;
      }
    });
    socket.on("error", (error) => settle({ served, error }));
    socket.on("close", (code, reason) => {
      // 1013: the server holds as many WebSocket connections as it takes; the reason says which setting.
      if (code === 1013) return settle(new CliError(`the server refused the connection: ${reason}`, EXIT.refused));
      settle({ served, error: new Error(`connection closed (${code}${reason.length ? ` ${reason}` : ""})`) });
    });
  });
}
