import type { CallToolResult, ServerContext } from "@modelcontextprotocol/server";
import { REGISTRY_UNREACHABLE, registryUnreachable } from "../../db/registry-error.js";
import { diskFull } from "../../lib/disk-space.js";
import { ServiceError } from "../../lib/errors.js";
import { CLIENT_LEFT } from "../http-transport.js";

/** What a tool handler is told about its call (the SDK's context). */
export type ToolExtra = ServerContext;

export const textResult = (text: string): CallToolResult => ({ content: [{ type: "text", text }] });
export const errorResult = (text: string): CallToolResult => ({ content: [{ type: "text", text }], isError: true });

/**
 * Runs a tool body; any failure becomes an `error: …` result (naming the field for bad input),
 * so pyCorral callers see their `error:` prefix and the session goes on.
 */
export async function guarded(body: () => Promise<CallToolResult> | CallToolResult): Promise<CallToolResult> {
  try {
    return await body();
  } catch (err) {
    if (err instanceof ServiceError) return errorResult(`error: ${err.field ? `${err.field}: ` : ""}${err.message}`);
    if (registryUnreachable(err)) return errorResult(`error: ${REGISTRY_UNREACHABLE}`);
    if (diskFull(err)) return errorResult("error: the disk that holds Corral's data dir is full; free some space on it, then try again");
    return errorResult(`error: the server could not complete this call: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * Sends `notifications/progress` every interval while a long call runs, when the client asked
 * for progress; clients that reset their timeout on progress then wait as long as the job does.
 */
export function keepReporting(
  extra: ToolExtra,
  intervalMs: number,
  describe: () => Promise<{ progress: number; total?: number; message: string }>,
): () => void {
  const progressToken = extra.mcpReq._meta?.progressToken;
  if (progressToken === undefined) return () => {};
  const timer = setInterval(() => {
    // A rejection nobody handles would end the process: a report that cannot be made stops the reports.
    describe()
      .then((progress) => extra.mcpReq.notify({ method: "notifications/progress", params: { progressToken, ...progress } }))
      .catch(() => clearInterval(timer));
  }, intervalMs);
  return () => clearInterval(timer);
}

/**
 * Calls `cancel` when the caller gives the call up (it cancelled, or ended its 2025-11-25
 * session), but not when only its connection closed: what the call started (a job) is durable
 * and outlives it, as the 2025-11-25 spec asks ("disconnection SHOULD NOT be interpreted as the
 * client cancelling"). A 2026-07-28 request has no session and no cancel notice over HTTP:
 * closing its stream is its only way to stop, and a dropped stream looks the same, so the job
 * is kept (a re-issued call finds it; `corral_cancel` stops it). Returns the function that stops listening.
 */
export function onGivenUp(extra: ToolExtra, cancel: () => void): () => void {
  const { signal } = extra.mcpReq;
  const onAbort = () => {
    if (!answerLost(extra)) cancel();
  };
  signal.addEventListener("abort", onAbort, { once: true });
  return () => signal.removeEventListener("abort", onAbort);
}

/**
 * Whether the call was stopped only by its connection closing, so its answer is lost but what it
 * started is kept: a 2025-11-25 connection that closed, or any stop of a 2026-07-28 request.
 */
export function answerLost(extra: ToolExtra): boolean {
  const { signal, envelope } = extra.mcpReq;
  return signal.aborted && (envelope !== undefined || signal.reason === CLIENT_LEFT);
}
