import type { ToolAnnotations } from "@modelcontextprotocol/server";

/**
 * The hints a client reads to decide which tools it may call without asking (MCP tool annotations).
 * One set per kind of tool, so that tools alike are told alike.
 */

/** Reads Corral's own registry, logs or hub: nothing changes, nothing outside is reached. */
export const READS: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };

/** Asks a server outside Corral (Ollama) and changes nothing. */
export const READS_OUTSIDE: ToolAnnotations = { readOnlyHint: true, openWorldHint: true };

/** Starts a worker CLI, which writes in its workdir and talks to its model's provider; each call is a new job. */
export const LAUNCHES: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };

/** Stops a job and its processes; cancelling an ended job again changes nothing. */
export const CANCELS: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };

/** Changes the conversation hub (names, messages) without destroying anything. */
export const HUB_WRITES: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, openWorldHint: false };
