import { McpServer, type RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Services } from "../services.js";
import { registerAgentTools } from "./tools/agent-tools.js";
import { registerCorralTools } from "./tools/corral-tools.js";
import { registerCostTools } from "./tools/cost-tools.js";
import { registerOllamaTools } from "./tools/ollama-tools.js";

export interface McpMount {
  /** Null: every agent plus the corral tools (`/mcp`); else that agent's tools only. */
  agent: string | null;
}

/**
 * One MCP server per session. Its agent tools follow the registry: an agent added, enabled,
 * disabled or removed changes the list, and the SDK tells the client (tools/list_changed).
 */
export function createMcpServer(services: Services, mount: McpMount): { server: McpServer; dispose(): void } {
  const server = new McpServer(
    { name: mount.agent ? `corral-${mount.agent}` : "corral", version: "0.1.0" },
    { capabilities: { tools: { listChanged: true } } },
  );
  const tools = new Map<string, RegisteredTool[]>();
  const sync = () => {
    const wanted = new Map(
      services.agents
        .enabledRows()
        .filter((a) => mount.agent === null || a.name === mount.agent)
        .map((a) => [a.name, a]),
    );
    for (const [name, registered] of tools) {
      if (wanted.has(name)) continue;
      for (const tool of registered) tool.remove();
      tools.delete(name);
    }
    for (const [name, agent] of wanted) {
      if (!tools.has(name)) tools.set(name, registerAgentTools(server, services, agent));
    }
  };
  sync();
  if (!mount.agent) {
    registerCorralTools(server, services);
    registerCostTools(server, services);
    registerOllamaTools(server, services);
  }
  services.agents.on("changed", sync);
  return { server, dispose: () => services.agents.off("changed", sync) };
}
