import pg from "pg";

/**
 * The channel a runner NOTIFYs after each change it stores to a job. The payload is the job's id
 * only: NOTIFY payloads stop at 8000 bytes, and the listener reads the job from the registry.
 * `<jobId>:<seq>` tells of output stored up to chunk seq, `<jobId>:files` (FILES_CHANGED) of file changes stored.
 */
export const JOB_CHANNEL = "corral_job";

/** The suffix of a JOB_CHANNEL payload that tells of a job's file changes stored. */
export const FILES_CHANGED = ":files";

/** The channel the server NOTIFYs when a job a runner holds is asked to stop: the runner stops its worker. Payload: the job's id. */
export const CANCEL_CHANNEL = "corral_cancel";

/** The channel the server NOTIFYs when it stores a browsing request for a runner (runner_requests). Payload: the request's id. */
export const REQUEST_CHANNEL = "corral_request";

/** The channel a runner NOTIFYs once it has stored its answer to a browsing request. Payload: the request's id. */
export const ANSWER_CHANNEL = "corral_answer";

/**
 * The channel the server NOTIFYs when a job waits for a runner to claim it (launched, or given back
 * by a runner that stopped or fell silent), or an agent with a runner label changed (its limit may
 * leave room now). Payload: the agent's runner label only; runners with that label claim at once.
 */
export const QUEUE_CHANNEL = "corral_queue";

/** The application_name of a listening connection (pg_stat_activity shows one per server or runner). */
export const LISTEN_APPLICATION = "corral-listen";

/** How long a listener whose connection dropped waits before it connects again. */
const RECONNECT_MS = 1000;

/** What a process hears, by channel: each NOTIFY's payload is given to its channel's handler. */
export type ChannelHandlers = Readonly<Record<string, (payload: string) => void>>;

export interface ChannelListener {
  close(): Promise<void>;
}

/**
 * LISTENs on every channel of `handlers` on one connection of its own (a pooled one would be handed
 * to queries and lose its LISTENs), calling each channel's handler with the payloads heard there:
 * a process holds one such connection however many channels it hears. A dropped connection is
 * opened again after a pause and LISTENs on all of them again; what was told meanwhile is not heard,
 * so each handler's owner must catch up some other way (a runner re-checks at its heartbeat and
 * claim poll; a job's end is still read by whoever asks).
 */
export async function listen(url: string, handlers: ChannelHandlers, onError: (err: Error) => void = () => {}): Promise<ChannelListener> {
  const byChannel = new Map(Object.entries(handlers));
  const channels = [...byChannel.keys()];
  if (!channels.length) throw new Error("listen: no channel to listen on");
  let client: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | null = null;

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: url, application_name: LISTEN_APPLICATION });
    next.on("notification", (message) => {
      const handler = byChannel.get(message.channel);
      if (handler && message.payload) handler(message.payload);
    });
    next.on("error", (err) => {
      onError(err);
      reconnect(next);
    });
    next.on("end", () => reconnect(next));
    try {
      await next.connect();
      // One round trip for all of them (a simple query may hold several statements).
      await next.query(channels.map((channel) => `listen ${next.escapeIdentifier(channel)}`).join("; "));
    } catch (err) {
      await next.end().catch(() => {});
      throw err;
    }
    client = next;
    if (closed) await next.end().catch(() => {});
  };

  /** Connects again after a pause, and again after each failure, until closed. */
  const scheduleConnect = () => {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = null;
      connect().catch((err: Error) => {
        onError(err);
        scheduleConnect();
      });
    }, RECONNECT_MS);
    retry.unref();
  };

  const reconnect = (lost: pg.Client) => {
    if (closed || client !== lost) return;
    client = null;
    lost.end().catch(() => {});
    scheduleConnect();
  };

  await connect();
  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await client?.end().catch(() => {});
      client = null;
    },
  };
}
