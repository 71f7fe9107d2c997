import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";

/**
 * Node's request and response to and from the web-standard ones the SDK's transport speaks.
 * The SDK's own Node wrapper goes through @hono/node-server, which sends an SSE answer's
 * headers on their own and its event and end after: two writes to the socket, each waking the
 * client, for an answer that is usually one event long. Here everything the transport
 * hands over in one turn of the event loop leaves in one write, and a stream that stays open (a
 * long `_run` reporting progress, the GET stream) still sends each event as it comes.
 */

/** The request for the transport, its body left out: Fastify has parsed it already. */
export function webRequestOf(raw: IncomingMessage): Request {
  const headers = new Headers();
  const list = raw.rawHeaders;
  for (let i = 0; i + 1 < list.length; i += 2) headers.append(list[i] as string, list[i + 1] as string);
  // The guard has checked Host by now: it is one this server answers to.
  return new Request(`http://${raw.headers.host}${raw.url}`, { method: raw.method, headers });
}

/** Writes the transport's answer; resolves once it has ended or the client has gone. */
export async function sendWebResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: OutgoingHttpHeaders = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  // Cancelling tells the transport the stream is gone, so it stops writing to it.
  const gone = () => void reader.cancel().catch(() => undefined);
  res.once("close", gone);
  // What is written is held back until the event loop turns, so the end, usually right behind,
  // joins the same write; a stream that stays open (the GET stream, a long call) still gets its
  // headers, then each event, a turn after they come.
  let held: NodeJS.Immediate | undefined;
  const hold = () => {
    if (held) return;
    res.cork();
    held = setImmediate(() => {
      held = undefined;
      res.uncork();
    });
  };
  hold();
  res.flushHeaders();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (res.destroyed) return;
      hold();
      if (!res.write(value)) await drained(res);
    }
    if (held) clearImmediate(held);
    held = undefined;
    // end() uncorks the socket fully: whatever is held goes out with the chunked end.
    res.end();
  } finally {
    // Left early (an error, or the client went): what is held goes now.
    if (held) {
      clearImmediate(held);
      res.uncork();
    }
    res.off("close", gone);
  }
}

/** Resolves when the response can take more, or has closed (then nothing more is written). */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}
