import { isFinalStatus, type Job } from "@corral/shared";
import {
  type CreateTaskResult,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  RELATED_TASK_META_KEY,
  type RequestId,
  type ServerCapabilities,
  type Tool,
  type Transport,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import { mcpActor } from "../../audit/service.js";
import type { McpTaskRow } from "../../db/schema.js";
import { ServiceError } from "../../lib/errors.js";
import type { Services } from "../../services.js";
import { runAnswer } from "../tools/agent-tools.js";
import { type CallHooks, CallsTransport } from "./calls-transport.js";
import { cancelTask, reachTask, startTask } from "./task-jobs.js";
import { decodeCursor, encodeCursor, isTerminal, taskOf, taskTtl, TASKS_PER_PAGE } from "./task-view.js";

/**
 * MCP Tasks (spec revision 2025-11-25, experimental) for `<agent>_run`: a `tools/call` with a
 * `task` starts the job and answers at once with a task; `tasks/get`, `tasks/result`,
 * `tasks/list` and `tasks/cancel` read and cancel it. Everything of tasks is in this folder: the
 * next revision turns tasks into an extension with another wire format (extension.ts).
 *
 * The SDK's own task support (`registerToolTask` with a TaskStore) is not used: for a tool whose
 * task support is "optional" its McpServer answers every plain call by creating a task and
 * polling it, which would take from a plain `_run` its progress notifications and its cancel on
 * abort, and list plain calls as tasks. So the `_run` tools stay plain tools of the McpServer;
 * this module answers the calls that carry a `task` before they reach it, marks `_run` as
 * `execution.taskSupport: "optional"` in `tools/list`, and serves `tasks/*` through the SDK's
 * request handlers.
 *
 * Who sees a task: the MCP session that created it lists it. Corral has one credential, so
 * there is no finer authorization context to bind a task to; as the spec asks of such servers,
 * a task's id is a random UUID told only to its creator, and that id reaches the task from any
 * session of the same server (a client whose session expired, or came back after a restart,
 * keeps its tasks), which then lists it. Job ids are not task ids.
 */
export const TASKS_CAPABILITY = {
  tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
} satisfies ServerCapabilities;

/** Which of the session's tools run as tasks. */
export interface TaskTools {
  /** The agent whose `<agent>_run` the tool is, if it is one of this session's. */
  runAgent(toolName: string): string | undefined;
}

/** Installs the `tasks/*` handlers; connect the server through the transport it returns for. */
export function serveTasks(server: McpServer, services: Services, tools: TaskTools): (transport: Transport) => Transport {
  const tasks = new SessionTasks(server, services);
  const low = server.server;
  // 2025-11-25 methods the SDK, built for 2026-07-28, no longer knows: served as custom methods.
  low.setRequestHandler("tasks/get", { params: TaskIdParams }, async ({ taskId }, extra) => taskOf(...(await tasks.reach(taskId, extra.sessionId))));
  low.setRequestHandler("tasks/list", { params: ListParams }, ({ cursor }, extra) => tasks.list(extra.sessionId, cursor));
  low.setRequestHandler("tasks/cancel", { params: TaskIdParams }, ({ taskId }, extra) => tasks.cancel(taskId, extra.sessionId));
  low.setRequestHandler("tasks/result", { params: TaskIdParams }, ({ taskId }, extra) => tasks.result(taskId, extra.sessionId, extra.mcpReq.signal));
  return (transport) => new CallsTransport(transport, new TaskCalls(tasks, tools, () => transport.sessionId));
}

const TaskIdParams = z.looseObject({ taskId: z.string() });
const ListParams = z
  .looseObject({ cursor: z.string().optional() })
  .optional()
  .transform((p) => p ?? {});

/** A task's metadata as a 2025-11-25 `tools/call` carries it. */
const TaskMetadataSchema = z.looseObject({ ttl: z.number().optional() });

class SessionTasks {
  constructor(
    private readonly server: McpServer,
    private readonly services: Services,
  ) {}

  private get repo() {
    return this.services.mcpTasks;
  }

  /** A task-augmented `<agent>_run`: its job is launched as a plain call's would be. */
  async create(agent: string, toolName: string, args: unknown, ttl: number | undefined, sessionId: string): Promise<CreateTaskResult> {
    const [row, job] = await startTask(this.services, { agent, args, ttlMs: taskTtl(ttl), sessionId, actor: this.actor() });
    return {
      task: taskOf(row, job),
      _meta: {
        "io.modelcontextprotocol/model-immediate-response": `${toolName} started job ${job.id} as task ${row.id}; its answer comes when the task completes (tasks/result).`,
      },
    };
  }

  /** The task and its job, for this session from now on; not found if it is unknown or expired. */
  async reach(taskId: string, sessionId: string | undefined): Promise<[McpTaskRow, Job]> {
    const [row, job] = await reachTask(this.services, taskId);
    if (sessionId !== undefined && row.sessionId !== sessionId) await this.repo.moveToSession(taskId, sessionId);
    return [row, job];
  }

  async list(sessionId: string | undefined, cursor: string | undefined) {
    const after = cursor === undefined ? null : decodeCursor(cursor);
    if (sessionId === undefined) return { tasks: [] };
    await this.repo.removeExpired(Date.now());
    const rows = await this.repo.page(sessionId, after, TASKS_PER_PAGE + 1);
    const page = rows.slice(0, TASKS_PER_PAGE);
    const last = page.at(-1);
    const jobs = await Promise.all(page.map((row) => this.services.jobs.find(row.jobId)));
    return {
      tasks: page.flatMap((row, i) => {
        const job = jobs[i];
        return job ? [taskOf(row, job)] : [];
      }),
      ...(rows.length > TASKS_PER_PAGE && last ? { nextCursor: encodeCursor(last) } : {}),
    };
  }

  /** The task is cancelled before the answer (as the spec asks), then its job, its worker killed. */
  async cancel(taskId: string, sessionId: string | undefined) {
    const [row, job] = await this.reach(taskId, sessionId);
    const { status } = taskOf(row, job);
    if (isTerminal(status)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Cannot cancel task: already in terminal status '${status}'`);
    return taskOf(...(await cancelTask(this.services, row, this.actor())));
  }

  /**
   * Blocks until the job has ended, then answers what a plain `_run` would have. A task cancelled
   * a moment ago waits too: its worker is still being stopped.
   */
  async result(taskId: string, sessionId: string | undefined, signal: AbortSignal) {
    let [, job] = await this.reach(taskId, sessionId);
    while (!isFinalStatus(job.status)) {
      if (signal.aborted) throw new ProtocolError(ProtocolErrorCode.InvalidRequest, "Request cancelled");
      await this.services.waits.waitFor([job.id], Number.MAX_SAFE_INTEGER, signal);
      [, job] = await this.reach(taskId, sessionId);
    }
    const answer = await runAnswer(this.services, job);
    return { ...answer, _meta: { ...answer._meta, [RELATED_TASK_META_KEY]: { taskId } } };
  }

  private actor() {
    return mcpActor(this.server.server.getClientVersion());
  }
}

/**
 * A session's calls: a `tools/call` with a `task` is answered here (a task for `<agent>_run`,
 * "method not found" for any other tool, as the spec asks of tools that do not take tasks), and
 * `tools/list` answers say which tools take one.
 */
class TaskCalls implements CallHooks {
  /** `tools/list` requests not answered yet. */
  private listing = new Set<RequestId>();

  constructor(
    private readonly tasks: SessionTasks,
    private readonly tools: TaskTools,
    private readonly sessionId: () => string | undefined,
  ) {}

  answer(request: JSONRPCRequest): Promise<JSONRPCMessage> | undefined {
    if (request.method === "tools/list") this.listing.add(request.id);
    // Its presence makes a call a task (the SDK's isTaskAugmentedRequestParams also passes plain calls).
    return request.method === "tools/call" && request.params?.task !== undefined ? this.createTask(request) : undefined;
  }

  outgoing(message: JSONRPCMessage): JSONRPCMessage {
    if ("error" in message && message.id !== undefined) this.listing.delete(message.id);
    if (!("result" in message) || !this.listing.delete(message.id)) return message;
    const tools = message.result.tools as Tool[];
    const marked = tools.map((tool) =>
      this.tools.runAgent(tool.name) ? { ...tool, execution: { ...tool.execution, taskSupport: "optional" as const } } : tool,
    );
    return { ...message, result: { ...message.result, tools: marked } };
  }

  private async createTask(request: JSONRPCRequest): Promise<JSONRPCMessage> {
    const params = request.params as { name?: unknown; arguments?: unknown; task?: unknown };
    const name = typeof params.name === "string" ? params.name : "";
    const agent = this.tools.runAgent(name);
    const sessionId = this.sessionId();
    const fail = (code: number, message: string): JSONRPCMessage => ({ jsonrpc: "2.0", id: request.id, error: { code, message } });
    if (!agent || sessionId === undefined) {
      return fail(
        ProtocolErrorCode.MethodNotFound,
        `${name || "this tool"} does not run as a task: only the <agent>_run tools take a task (execution.taskSupport "optional"); call it without "task"`,
      );
    }
    const task = TaskMetadataSchema.safeParse(params.task);
    if (!task.success)
      return fail(
        ProtocolErrorCode.InvalidParams,
        `error: task.ttl: ${task.error.issues[0]?.message ?? "invalid"}; give a time to live in milliseconds, or leave it out`,
      );
    try {
      return { jsonrpc: "2.0", id: request.id, result: await this.tasks.create(agent, name, params.arguments, task.data.ttl, sessionId) };
    } catch (err) {
      if (err instanceof ServiceError) return fail(ProtocolErrorCode.InvalidParams, `error: ${err.field ? `${err.field}: ` : ""}${err.message}`);
      return fail(
        ProtocolErrorCode.InternalError,
        `error: the server could not start this task: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
}
