import type { CallToolResult, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { ServiceError } from "../../lib/errors.js";

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export const textResult = (text: string): CallToolResult => ({ content: [{ type: "text", text }] });
export const errorResult = (text: string): CallToolResult => ({ content: [{ type: "text", text }], isError: true });

/** Runs a tool body; a ServiceError becomes an `error: …` result naming the field. */
export async function guarded(body: () => Promise<CallToolResult> | CallToolResult): Promise<CallToolResult> {
  try {
    return await body();
  } catch (err) {
    if (err instanceof ServiceError) return errorResult(`error: ${err.field ? `${err.field}: ` : ""}${err.message}`);
    throw err;
  }
}

/**
 * Sends `notifications/progress` every interval while a long call runs, when the client asked
 * for progress; clients that reset their timeout on progress then wait as long as the job does.
 */
export function keepReporting(extra: ToolExtra, intervalMs: number, describe: () => { progress: number; total?: number; message: string }): () => void {
  const progressToken = extra._meta?.progressToken;
  if (progressToken === undefined) return () => {};
  const timer = setInterval(() => {
    void extra
      .sendNotification({ method: "notifications/progress", params: { progressToken, ...describe() } })
      .catch(() => clearInterval(timer));
  }, intervalMs);
  return () => clearInterval(timer);
}
