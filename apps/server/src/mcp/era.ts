/**
 * The protocol era a server instance answers in: `legacy` for one 2025-11-25 session, `modern`
 * for one 2026-07-28 request (no session: nothing of it outlives the request).
 */
export type McpEra = "legacy" | "modern";
