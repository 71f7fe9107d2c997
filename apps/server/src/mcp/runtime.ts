import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { createMcpServer } from "./server-factory.js";

/** What opening an MCP session needs: the SDK's transport and schemas, and the tools built on them. */
export interface McpRuntime {
  StreamableHTTPServerTransport: typeof StreamableHTTPServerTransport;
  isInitializeRequest: typeof isInitializeRequest;
  createMcpServer: typeof createMcpServer;
}

let loading: Promise<McpRuntime> | undefined;

/**
 * Loaded with the first session, not at start: the SDK's schemas were a third of a cold start
 * and a good part of idle memory, and many starts never serve MCP (the panel, REST).
 */
export function loadMcpRuntime(): Promise<McpRuntime> {
  loading ??= Promise.all([
    import("@modelcontextprotocol/sdk/server/streamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js"),
    import("./server-factory.js"),
  ]).then(
    ([transport, types, factory]) => ({
      StreamableHTTPServerTransport: transport.StreamableHTTPServerTransport,
      isInitializeRequest: types.isInitializeRequest,
      createMcpServer: factory.createMcpServer,
    }),
    (err: unknown) => {
      loading = undefined;
      throw err;
    },
  );
  return loading;
}
