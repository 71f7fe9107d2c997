import type { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { NodeStreamableHttpTransport } from "./http-transport.js";
import type { createMcpServer } from "./server-factory.js";

/** What opening an MCP session needs: the transport and the SDK's schemas, and the tools built on them. */
export interface McpRuntime {
  NodeStreamableHttpTransport: typeof NodeStreamableHttpTransport;
  isInitializeRequest: typeof isInitializeRequest;
  createMcpServer: typeof createMcpServer;
}

let loading: Promise<McpRuntime> | undefined;

/**
 * Loaded with the first session, not at start: the SDK's schemas were a third of a cold start
 * and a good part of idle memory, and many starts never serve MCP (the panel, REST).
 */
export function loadMcpRuntime(): Promise<McpRuntime> {
  loading ??= Promise.all([import("./http-transport.js"), import("@modelcontextprotocol/sdk/types.js"), import("./server-factory.js")]).then(
    ([transport, types, factory]) => ({
      NodeStreamableHttpTransport: transport.NodeStreamableHttpTransport,
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
