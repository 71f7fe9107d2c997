import type { ToolAnnotations } from "@modelcontextprotocol/server";

/**
 * The hints a client reads to decide which tools it may call without asking (MCP tool annotations).
 * One set per kind of tool, so that tools alike are told alike. A hint at the spec's default
 * (readOnlyHint false; destructiveHint true and idempotentHint false for a tool that writes;
 * openWorldHint true) is left out: it says nothing, and every orchestrator reads it every turn.
 */

/** Reads Corral's own registry, logs or hub: nothing changes, nothing outside is reached. */
export const READS: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };

/** Asks a server outside Corral (Ollama) and changes nothing. */
export const READS_OUTSIDE: ToolAnnotations = { readOnlyHint: true };

/** Starts a worker CLI, which writes in its workdir and talks to its model's provider; each call is a new job. */
export const LAUNCHES: ToolAnnotations = { destructiveHint: false };

/** Stops a job and its processes; cancelling an ended job again changes nothing. */
export const CANCELS: ToolAnnotations = { destructiveHint: true, idempotentHint: true, openWorldHint: false };

/** Changes the conversation hub (names, messages) without destroying anything. */
export const HUB_WRITES: ToolAnnotations = { destructiveHint: false, openWorldHint: false };
