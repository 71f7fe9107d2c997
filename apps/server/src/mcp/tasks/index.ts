import { randomUUID } from "node:crypto";
import { isFinalStatus, McpJobInputSchema, type Job } from "@corral/shared";
import {
  type CreateTaskResult,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type McpServer,
  type MessageExtraInfo,
  ProtocolError,
  ProtocolErrorCode,
  RELATED_TASK_META_KEY,
  type RequestId,
  type ServerCapabilities,
  type Tool,
  type Transport,
  type TransportSendOptions,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import { mcpActor } from "../../audit/service.js";
import type { McpTaskRow } from "../../db/schema.js";
import { parseInput, ServiceError } from "../../lib/errors.js";
import type { Services } from "../../services.js";
import { inMcpNames, launchRequestOf } from "../launch-input.js";
import { runAnswer } from "../tools/agent-tools.js";
import { decodeCursor, encodeCursor, isExpired, isTerminal, taskOf, taskTtl, TASKS_PER_PAGE } from "./task-view.js";

/**
 * MCP Tasks (spec revision 2025-11-25, experimental) for `<agent>_run`: a `tools/call` with a
 * `task` starts the job and answers at once with a task; `tasks/get`, `tasks/result`,
 * `tasks/list` and `tasks/cancel` read and cancel it. Everything of tasks is in this folder: the
 * next revision turns tasks into an extension with another wire format.
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
  return (transport) => new TaskCallsTransport(transport, tasks, tools);
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
    const input = parseInput(McpJobInputSchema, args ?? {});
    const job = await inMcpNames(() => this.services.launches.launch(agent, launchRequestOf(input), "mcp", this.actor().client));
    const row: McpTaskRow = { id: randomUUID(), jobId: job.id, sessionId, createdAt: job.createdAt, ttlMs: taskTtl(ttl), cancelledAt: null };
    try {
      await this.repo.removeExpired(Date.now());
      await this.repo.insert(row);
    } catch (err) {
      // No task to follow it by: the job goes too.
      void this.services.cancels.cancel(job.id, this.actor()).catch(() => undefined);
      throw err;
    }
    return {
      task: taskOf(row, job),
      _meta: {
        "io.modelcontextprotocol/model-immediate-response": `${toolName} started job ${job.id} as task ${row.id}; its answer comes when the task completes (tasks/result).`,
      },
    };
  }

  /** The task and its job, for this session from now on; not found if it is unknown or expired. */
  async reach(taskId: string, sessionId: string | undefined): Promise<[McpTaskRow, Job]> {
    const row = await this.repo.get(taskId);
    const job = row && (await this.services.jobs.find(row.jobId));
    if (!row || !job) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Failed to retrieve task: Task not found: ${taskId}`);
    if (isExpired(row, job)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Failed to retrieve task: Task has expired: ${taskId}`);
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
    await this.repo.cancel(taskId, Date.now());
    const ended = await this.services.cancels.cancel(job.id, this.actor());
    return taskOf((await this.repo.get(taskId)) ?? row, ended);
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
 * Stands between the session's transport and its McpServer: a `tools/call` with a `task` is
 * answered here (a task for `<agent>_run`, "method not found" for any other tool, as the spec
 * asks of tools that do not take tasks), and `tools/list` answers say which tools take one.
 */
class TaskCallsTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  /** `tools/list` requests not answered yet. */
  private listing = new Set<RequestId>();

  constructor(
    private readonly inner: Transport,
    private readonly tasks: SessionTasks,
    private readonly tools: TaskTools,
  ) {
    const closed = inner.onclose;
    inner.onclose = () => {
      closed?.();
      this.onclose?.();
    };
    const failed = inner.onerror;
    inner.onerror = (error) => {
      failed?.(error);
      this.onerror?.(error);
    };
    inner.onmessage = (message, extra) => this.receive(message, extra);
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if ("error" in message && message.id !== undefined) this.listing.delete(message.id);
    if ("result" in message && this.listing.delete(message.id)) {
      const tools = message.result.tools as Tool[];
      const marked = tools.map((tool) =>
        this.tools.runAgent(tool.name) ? { ...tool, execution: { ...tool.execution, taskSupport: "optional" as const } } : tool,
      );
      return this.inner.send({ ...message, result: { ...message.result, tools: marked } }, options);
    }
    return this.inner.send(message, options);
  }

  private receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if ("method" in message && "id" in message) {
      if (message.method === "tools/list") this.listing.add(message.id);
      // Its presence makes a call a task (the SDK's isTaskAugmentedRequestParams also passes plain calls).
      if (message.method === "tools/call" && message.params?.task !== undefined) {
        this.createTask(message)
          .then((reply) => this.inner.send(reply))
          .catch((err: unknown) => this.onerror?.(err instanceof Error ? err : new Error(String(err))));
        return;
      }
    }
    this.onmessage?.(message, extra);
  }

  private async createTask(request: JSONRPCRequest): Promise<JSONRPCMessage> {
    const params = request.params as { name?: unknown; arguments?: unknown; task?: unknown };
    const name = typeof params.name === "string" ? params.name : "";
    const agent = this.tools.runAgent(name);
    const fail = (code: number, message: string): JSONRPCMessage => ({ jsonrpc: "2.0", id: request.id, error: { code, message } });
    if (!agent || this.sessionId === undefined) {
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
      return { jsonrpc: "2.0", id: request.id, result: await this.tasks.create(agent, name, params.arguments, task.data.ttl, this.sessionId) };
    } catch (err) {
      if (err instanceof ServiceError) return fail(ProtocolErrorCode.InvalidParams, `error: ${err.field ? `${err.field}: ` : ""}${err.message}`);
      return fail(
        ProtocolErrorCode.InternalError,
        `error: the server could not start this task: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
}
