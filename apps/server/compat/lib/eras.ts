// The MCP protocol eras Corral serves, by the names clients that can pin one use (MCP Inspector 2.x's
// `--protocol-era`): `legacy` is 2025-11-25 (initialize, sessions), `modern` is 2026-07-28
// (`server/discover`, stateless, `_meta` on every request). A client that can pin an era runs once
// with each era listed here.
export type Era = "legacy" | "modern";

export const SERVED_ERAS: readonly Era[] = ["legacy", "modern"];
