import type { ServerResponse } from "node:http";
import type { McpOutbox } from "./outbox.js";

/**
 * Sends a web-standard `Response` (the SDK's answer to a 2026-07-28 request) on Node's response.
 * Each chunk is written as the SDK makes it, not when the client has read the one before: the
 * SDK's stream queues whatever it is given (progress, keep-alives, the answer), so waiting for a
 * client that does not read would hold it there, uncounted. Written, what waits for the client
 * is held by `res` and counted by the outbox, whose cap (CORRAL_MCP_MAX_PENDING_BYTES) drops the
 * responses that held theirs longest, as for 2025-11-25 sessions. Resolves once the response
 * has ended or its client left (the SDK's stream is then cancelled); never rejects.
 */
export async function sendWebResponse(response: Response, res: ServerResponse, outbox: McpOutbox): Promise<void> {
  const body = response.body;
  // The client left while the answer was being made: there is no one to send it to.
  if (res.destroyed) return void body?.cancel().catch(() => undefined);
  const reader = body?.getReader();
  const left = () => void reader?.cancel().catch(() => undefined);
  res.once("close", left);
  try {
    res.writeHead(response.status, Object.fromEntries(response.headers));
    for (;;) {
      const chunk = await reader?.read();
      if (res.destroyed) return;
      if (!chunk || chunk.done) return void res.end();
      res.write(chunk.value);
      outbox.wrote(res);
    }
  } catch {
    // The SDK's stream failed mid-answer (or its headers could not be sent): the status line may be
    // gone already, so the connection ends and the client sees the answer cut short.
    res.destroy();
    left();
  } finally {
    res.off("close", left);
  }
}
