import {
  type JSONRPCMessage,
  type JSONRPCRequest,
  McpServer,
  ProtocolErrorCode,
  type RegisteredTool,
  type Transport,
} from "@modelcontextprotocol/server";
import type { AgentRow } from "../db/schema.js";
import type { Services } from "../services.js";
import type { McpEra } from "./era.js";
import { CLAUDE_CHANNEL } from "./hub-link.js";
import { instructionsFor } from "./instructions.js";
import { serveTasksExtension, TASKS_EXTENSION_CAPABILITY } from "./tasks/extension.js";
import { serveTasks, TASKS_CAPABILITY, type TaskTools } from "./tasks/index.js";
import { registerAgentTools } from "./tools/agent-tools.js";
import type { McpShared } from "./tools/mcp-shared.js";
import { registerCorralTools } from "./tools/corral-tools.js";
import { registerCostTools } from "./tools/cost-tools.js";
import { registerHubTools } from "./tools/hub-tools.js";
import { registerOllamaTools } from "./tools/ollama-tools.js";
import { registerRunManyTool } from "./tools/run-many-tool.js";
import { type ToolSet, toolSets } from "./tool-agents.js";
import { hiddenToolReason, type McpMount } from "./toolsets.js";
import { registerWorktreeTools } from "./tools/worktree-tools.js";
import { CallsTransport } from "./tasks/calls-transport.js";

export interface SessionServer {
  server: McpServer;
  /** Makes the agent tools match these enabled agents; the SDK tells the client (tools/list_changed). */
  syncTools(enabled: AgentRow[]): void;
  /** Connects the server to the session's transport, with MCP tasks for its `_run` tools. */
  connect(transport: Transport): Promise<void>;
}

/**
 * One MCP server per 2025-11-25 session, or per 2026-07-28 request. A session's agent tools
 * follow the registry through `syncTools`, which the session table calls with one read of the
 * registry for all sessions; a request's are those of the registry when it came.
 */
export function createMcpServer(services: Services, mount: McpMount, enabled: AgentRow[], shared: McpShared, era: McpEra): SessionServer {
  const serverInfo = { name: mount.agent ? `corral-${mount.agent}` : "corral", version: "0.1.0" };
  const server = new TaskServer(serverInfo, {
    // MCP tasks as 2025-11-25 has them live in a session; the 2026-07-28 revision moved them to an extension.
    capabilities: {
      tools: { listChanged: true },
      ...(era === "legacy" ? TASKS_CAPABILITY : TASKS_EXTENSION_CAPABILITY),
      // Claude Code listens for hub messages pushed as channel events (research preview; docs/conversations.md).
      // Only a session has the stream they come on (a 2026-07-28 listen stream carries only list changes).
      ...(era === "legacy" && mount.toolsets.has("hub") && !mount.agent ? { experimental: { [CLAUDE_CHANNEL]: {} } } : {}),
    },
    instructions: instructionsFor(mount),
    // Adding an agent registers three tools: the client hears of it once, not three times.
    debouncedNotificationMethods: ["notifications/tools/list_changed"],
  });
  /** Registered tools by name prefix, with the agent they run and what they were registered with. */
  const tools = new Map<string, { runs: string; shape: string; registered: RegisteredTool[] }>();
  // What a set's schemas and descriptions are made of: a change of it registers the set again.
  const shapeOf = (set: ToolSet) => JSON.stringify([set.runs, set.row.name, set.row.description]);
  const syncTools = (rows: AgentRow[]) => {
    const wanted = new Map([...toolSets(rows, services.config)].filter(([name]) => mount.agent === null || name === mount.agent));
    for (const [name, entry] of tools) {
      const set = wanted.get(name);
      if (set && shapeOf(set) === entry.shape) continue;
      for (const tool of entry.registered) tool.remove();
      tools.delete(name);
    }
    for (const [name, set] of wanted) {
      if (!tools.has(name))
        tools.set(name, { runs: set.runs, shape: shapeOf(set), registered: registerAgentTools(server, services, set, shared, mount) });
    }
  };
  syncTools(enabled);
  if (!mount.agent) {
    registerCorralTools(server, services);
    registerRunManyTool(server, services, mount, shared.hubLinks);
    if (mount.toolsets.has("worktrees")) registerWorktreeTools(server, services);
    if (mount.toolsets.has("hub")) registerHubTools(server, services, shared.hubLinks);
    if (mount.toolsets.has("costs")) registerCostTools(server, services);
    if (mount.toolsets.has("ollama")) registerOllamaTools(server, services);
  }
  const taskTools: TaskTools = {
    runAgent: (tool) => {
      const prefix = tool.endsWith("_run") ? tool.slice(0, -"_run".length) : undefined;
      return prefix !== undefined ? tools.get(prefix)?.runs : undefined;
    },
  };
  const withTasks = era === "legacy" ? serveTasks(server, services, taskTools) : serveTasksExtension(server, services, taskTools, serverInfo);
  server.wrapTransport = (transport) => withTasks(new CallsTransport(transport, { answer: (request) => refuseHiddenTool(request, mount) }));
  const connect = (transport: Transport) => server.connect(transport);
  return { server, syncTools, connect };
}

/**
 * A call of a tool this mount does not show because it is another toolset's: refused with the
 * URL that shows it (the SDK would only say "not found"), as a JSON-RPC error, alike in both eras.
 */
function refuseHiddenTool(request: JSONRPCRequest, mount: McpMount): Promise<JSONRPCMessage> | undefined {
  if (request.method !== "tools/call") return undefined;
  const name = (request.params as { name?: unknown } | undefined)?.name;
  const reason = typeof name === "string" ? hiddenToolReason(name, mount) : undefined;
  if (reason === undefined) return undefined;
  return Promise.resolve({ jsonrpc: "2.0", id: request.id, error: { code: ProtocolErrorCode.InvalidParams, message: reason } });
}

/**
 * Connects through the tasks' transport, whoever connects it: a session does so itself, while
 * the SDK's per-request handler connects a 2026-07-28 instance on its own transport.
 */
class TaskServer extends McpServer {
  wrapTransport: (transport: Transport) => Transport = (transport) => transport;

  override connect(transport: Transport): Promise<void> {
    return super.connect(this.wrapTransport(transport));
  }
}
