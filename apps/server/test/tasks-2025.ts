import type { CallToolResult, Client } from "@modelcontextprotocol/client";
import { z } from "zod";

/**
 * MCP tasks as the 2025-11-25 revision has them, asked for over the official SDK client's
 * `request`: SDK v2 speaks the 2026-07-28 revision, which moved tasks to an extension, so its
 * client no longer has a task API of the 2025-11-25 kind. The shapes are the revision's schema.
 */
export const TaskSchema = z.looseObject({
  taskId: z.string(),
  status: z.enum(["working", "input_required", "completed", "failed", "cancelled"]),
  statusMessage: z.string().optional(),
  createdAt: z.string(),
  lastUpdatedAt: z.string(),
  ttl: z.number().nullable(),
  pollInterval: z.number().optional(),
});
export type Task = z.infer<typeof TaskSchema>;
export const CreateTaskResultSchema = z.looseObject({ task: TaskSchema });
const ListTasksResultSchema = z.looseObject({ tasks: z.array(TaskSchema), nextCursor: z.string().optional() });
const CallToolResultSchema = z.looseObject({ content: z.array(z.looseObject({ type: z.string() })), isError: z.boolean().optional() });

export const getTask = (client: Client, taskId: string): Promise<Task> => client.request({ method: "tasks/get", params: { taskId } }, TaskSchema);

export const cancelTask = (client: Client, taskId: string): Promise<Task> =>
  client.request({ method: "tasks/cancel", params: { taskId } }, TaskSchema);

export const listTasks = (client: Client, cursor?: string) =>
  client.request({ method: "tasks/list", params: cursor === undefined ? {} : { cursor } }, ListTasksResultSchema);

export const getTaskResult = async (client: Client, taskId: string): Promise<CallToolResult> =>
  (await client.request({ method: "tasks/result", params: { taskId } }, CallToolResultSchema, { timeout: 120_000 })) as CallToolResult;
