import type { Job } from "@corral/shared";
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  type Implementation,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type McpServer,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  SERVER_INFO_META_KEY,
  type ServerCapabilities,
  type ServerContext,
  type Transport,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import { mcpActor } from "../../audit/service.js";
import type { McpTaskRow } from "../../db/schema.js";
import { ServiceError } from "../../lib/errors.js";
import type { Services } from "../../services.js";
import { runAnswer } from "../tools/agent-tools.js";
import { type CallHooks, CallsTransport } from "./calls-transport.js";
import type { TaskTools } from "./index.js";
import { cancelTask, reachTask, startTask } from "./task-jobs.js";
import { DEFAULT_TASK_TTL_MS, isTerminal, TASK_POLL_INTERVAL_MS, taskFields } from "./task-view.js";

/**
 * The Tasks extension of MCP 2026-07-28 (`io.modelcontextprotocol/tasks`, SEP-2663) for
 * `<agent>_run`. Task creation is the server's call: a `tools/call` of `<agent>_run` from a request
 * whose client capabilities declare the extension is answered at once with a task (`resultType:
 * "task"`) backed by the job; any other call, or a client without the extension, gets the plain
 * result. `tasks/get` polls it (its result inline once completed), `tasks/cancel` cancels its job,
 * `tasks/update` is acknowledged and changes nothing: Corral's tasks never ask for input, and the
 * spec has a server ignore responses to requests it has not made. There is no `tasks/list`.
 *
 * No session holds a task: its id, a random UUID told only to the call that made it, reaches it
 * from any request (the 2025-11-25 tasks, index.ts, are the same rows; a task made here belongs to
 * no session, so none lists it).
 */
export const TASKS_EXTENSION_ID = "io.modelcontextprotocol/tasks";

/** No settings are defined: an empty object says the server serves the extension. */
export const TASKS_EXTENSION_CAPABILITY = { extensions: { [TASKS_EXTENSION_ID]: {} } } satisfies ServerCapabilities;

/** Installs `tasks/get`, `tasks/cancel`, `tasks/update`; connect the server through the transport it returns for. */
export function serveTasksExtension(
  server: McpServer,
  services: Services,
  tools: TaskTools,
  serverInfo: Implementation,
): (transport: Transport) => Transport {
  const low = server.server;
  const reach = async (taskId: string, ctx: ServerContext) => {
    requireExtension(ctx.mcpReq.envelope);
    return reachTask(services, taskId);
  };
  // tasks/get and tasks/cancel are 2025-11-25 names the SDK lets an extension reuse once it gives their schemas.
  low.setRequestHandler("tasks/get", { params: TaskIdParams }, async ({ taskId }, ctx) => detailedTask(services, ...(await reach(taskId, ctx))));
  low.setRequestHandler("tasks/cancel", { params: TaskIdParams }, async ({ taskId }, ctx) => {
    const [row, job] = await reach(taskId, ctx);
    // Cooperative, so acknowledged whatever the state: a task already ended stays as it ended.
    if (!isTerminal(taskFields(row, job, "modern").status)) await cancelTask(services, row, actorOf(ctx.mcpReq.envelope));
    return {};
  });
  // Its `inputResponses` the SDK lifts off the params (they are a retry field of 2026-07-28).
  low.setRequestHandler("tasks/update", { params: TaskIdParams }, async ({ taskId }, ctx) => {
    await reach(taskId, ctx);
    return {};
  });
  return (transport) => new CallsTransport(transport, new ExtensionCalls(services, tools, serverInfo));
}

const TaskIdParams = z.looseObject({ taskId: z.string().max(200) });

/** Answers a `tools/call` of `<agent>_run` with a task when the request's client declares the extension. */
class ExtensionCalls implements CallHooks {
  constructor(
    private readonly services: Services,
    private readonly tools: TaskTools,
    private readonly serverInfo: Implementation,
  ) {}

  answer(request: JSONRPCRequest): Promise<JSONRPCMessage> | undefined {
    if (request.method !== "tools/call") return undefined;
    const params = request.params as { name?: unknown; arguments?: unknown; _meta?: Record<string, unknown> } | undefined;
    const agent = typeof params?.name === "string" ? this.tools.runAgent(params.name) : undefined;
    if (agent === undefined || !declaresExtension(params?._meta)) return undefined;
    return this.createTask(request.id, agent, params?.arguments, params?._meta);
  }

  private async createTask(
    id: JSONRPCRequest["id"],
    agent: string,
    args: unknown,
    envelope: Record<string, unknown> | undefined,
  ): Promise<JSONRPCMessage> {
    const fail = (code: number, message: string): JSONRPCMessage => ({ jsonrpc: "2.0", id, error: { code, message } });
    try {
      const [row, job] = await startTask(this.services, { agent, args, ttlMs: DEFAULT_TASK_TTL_MS, sessionId: "", actor: actorOf(envelope) });
      return { jsonrpc: "2.0", id, result: { resultType: "task", ...taskOf(row, job), _meta: { [SERVER_INFO_META_KEY]: this.serverInfo } } };
    } catch (err) {
      if (err instanceof ServiceError) return fail(ProtocolErrorCode.InvalidParams, `error: ${err.field ? `${err.field}: ` : ""}${err.message}`);
      return fail(
        ProtocolErrorCode.InternalError,
        `error: the server could not start this task: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
}

/** The task as the extension describes it (`Task`). */
function taskOf(row: McpTaskRow, job: Job) {
  const fields = taskFields(row, job, "modern");
  return { ...fields, ttlMs: row.ttlMs, ...(isTerminal(fields.status) ? {} : { pollIntervalMs: TASK_POLL_INTERVAL_MS }) };
}

/** `tasks/get`'s answer (`DetailedTask`): once completed, the CallToolResult a plain `_run` gives, inline. */
async function detailedTask(services: Services, row: McpTaskRow, job: Job) {
  const task = taskOf(row, job);
  if (task.status !== "completed") return task;
  return { ...task, result: { resultType: "complete", ...(await runAnswer(services, job)) } };
}

/** The per-request client capabilities declare the extension (its value an object: no settings are defined yet). */
function declaresExtension(envelope: Record<string, unknown> | undefined): boolean {
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as { extensions?: Record<string, unknown> } | undefined;
  const declared = capabilities?.extensions?.[TASKS_EXTENSION_ID];
  return typeof declared === "object" && declared !== null && !Array.isArray(declared);
}

/** The extension asks `-32021` of `tasks/*` from a client that did not declare it. */
function requireExtension(envelope: Record<string, unknown> | undefined): void {
  if (!declaresExtension(envelope))
    throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { [TASKS_EXTENSION_ID]: {} } } });
}

/** The client a request came from, for the audit trail: its envelope names it. */
function actorOf(envelope: Record<string, unknown> | undefined) {
  return mcpActor(envelope?.[CLIENT_INFO_META_KEY] as Implementation | undefined);
}
