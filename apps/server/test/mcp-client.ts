import { type CallToolResult, Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { TestServer } from "./helpers.js";

/**
 * The protocol era the MCP tests speak: 2025-11-25 sessions (`legacy`, the SDK client's default)
 * unless `CORRAL_TEST_MCP_ERA=modern` pins 2026-07-28.
 */
export const TEST_MCP_ERA: "legacy" | "modern" = process.env.CORRAL_TEST_MCP_ERA === "modern" ? "modern" : "legacy";

/** The official SDK client over real HTTP, as Claude Code connects; `era` pins a protocol era. */
export async function connectMcp(
  server: Pick<TestServer, "url" | "auth">,
  mountPath = "/mcp",
  headers: Record<string, string> = server.auth,
  era: "legacy" | "modern" = TEST_MCP_ERA,
): Promise<Client> {
  const client = new Client(
    { name: "corral-test", version: "1.0.0" },
    era === "modern" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : undefined,
  );
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}${mountPath}`), { requestInit: { headers } });
  await client.connect(transport);
  return client;
}

export function textOf(result: unknown): string {
  const content = (result as CallToolResult).content;
  return content.map((c) => (c.type === "text" ? c.text : "")).join("");
}
