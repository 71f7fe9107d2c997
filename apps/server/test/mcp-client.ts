import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { TestServer } from "./helpers.js";

/** The official SDK client over real HTTP, as Claude Code connects. */
export async function connectMcp(
  server: Pick<TestServer, "url" | "auth">,
  mountPath = "/mcp",
  headers: Record<string, string> = server.auth,
): Promise<Client> {
  const client = new Client({ name: "corral-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}${mountPath}`), { requestInit: { headers } });
  await client.connect(transport);
  return client;
}

export function textOf(result: unknown): string {
  const content = (result as CallToolResult).content;
  return content.map((c) => (c.type === "text" ? c.text : "")).join("");
}
