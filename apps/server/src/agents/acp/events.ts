/**
 * What Corral's ACP client prints, one JSON object a line: the `acp` kind's parser and Readable
 * view read these (agents/kinds/acp.ts). Updates are the agent's `session/update`s as they came,
 * from the job's prompt on, but for the first report of a tool call, always printed as the
 * `tool_call` that opens it (the agent may have sent a `tool_call_update`, or only asked permission).
 */
export type AcpClientEvent =
  | { type: "session"; sessionId: string; agent: string | null; loaded: boolean }
  | { type: "update"; update: unknown }
  | { type: "permission"; title: string; kind: string; allowed: boolean; reason: string }
  | { type: "file"; op: "read" | "write"; path: string; ok: boolean; detail: string }
  | { type: "result"; stopReason: string; usage: unknown }
  | { type: "error"; message: string };

/** Exit codes of the client: the job's status follows them. */
export const ACP_EXIT = { ok: 0, failed: 1, usage: 2, cancelled: 130 } as const;
