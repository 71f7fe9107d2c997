import type { isInitializeRequest, isLegacyRequest, ProtocolError } from "@modelcontextprotocol/server";
import type { NodeStreamableHttpTransport } from "./http-transport.js";
import type { ModernMcp } from "./modern.js";
import type { createMcpServer } from "./server-factory.js";

/** What serving MCP needs: the 2025-11-25 session transport, the 2026-07-28 handler, the era test, and the tools. */
export interface McpRuntime {
  NodeStreamableHttpTransport: typeof NodeStreamableHttpTransport;
  ModernMcp: typeof ModernMcp;
  isLegacyRequest: typeof isLegacyRequest;
  isInitializeRequest: typeof isInitializeRequest;
  ProtocolError: typeof ProtocolError;
  createMcpServer: typeof createMcpServer;
}

let loading: Promise<McpRuntime> | undefined;

/**
 * Loaded with the first MCP request, not at start: the SDK's schemas were a third of a cold start
 * and a good part of idle memory, and many starts never serve MCP (the panel, REST).
 */
export function loadMcpRuntime(): Promise<McpRuntime> {
  loading ??= Promise.all([
    import("./http-transport.js"),
    import("./modern.js"),
    import("@modelcontextprotocol/server"),
    import("./server-factory.js"),
  ]).then(
    ([transport, modern, sdk, factory]) => ({
      NodeStreamableHttpTransport: transport.NodeStreamableHttpTransport,
      ModernMcp: modern.ModernMcp,
      isLegacyRequest: sdk.isLegacyRequest,
      isInitializeRequest: sdk.isInitializeRequest,
      ProtocolError: sdk.ProtocolError,
      createMcpServer: factory.createMcpServer,
    }),
    (err: unknown) => {
      loading = undefined;
      throw err;
    },
  );
  return loading;
}
