import type { McpJobInput } from "@corral/shared";
import type { LaunchRequest } from "../jobs/launch-request.js";
import { ServiceError } from "../lib/errors.js";

/** The launch fields whose names on MCP (pyCorral's, which its callers depend on) differ from the launch request's. */
const MCP_NAMES = {
  timeoutS: "timeout_s",
  maxCostUsd: "max_cost_usd",
  maxTokens: "max_tokens",
  sharedWorkdir: "shared_workdir",
} as const satisfies Partial<Record<keyof LaunchRequest, keyof McpJobInput>>;

/**
 * Launch options most calls leave to the agent's settings: the launch tools' schemas show them
 * only on a mount with `?options=all`, and take them on every mount.
 */
export const RARE_LAUNCH_OPTIONS = [
  "timeout_s",
  "max_cost_usd",
  "max_tokens",
  "retry",
  "shared_workdir",
  "worktree",
  "base",
] as const satisfies readonly (keyof McpJobInput)[];

/** An MCP tool's job fields as the launch request every door gives the job engine. */
export function launchRequestOf(input: McpJobInput): LaunchRequest {
  const { timeout_s, max_cost_usd, max_tokens, shared_workdir, ...same } = input;
  return { ...same, timeoutS: timeout_s, maxCostUsd: max_cost_usd, maxTokens: max_tokens, sharedWorkdir: shared_workdir };
}

/**
 * Runs a launch asked for by an MCP tool: a refusal that names a launch field names it as the
 * tool's caller spelled it (`max_cost_usd`, not `maxCostUsd`).
 */
export async function inMcpNames<T>(launch: () => Promise<T>): Promise<T> {
  try {
    return await launch();
  } catch (err) {
    if (!(err instanceof ServiceError) || err.field === undefined || mcpField(err.field) === err.field) throw err;
    throw new ServiceError(err.message, err.status, mcpField(err.field), err.issues, err.code, err.details);
  }
}

/** `maxCostUsd` → `max_cost_usd`; the first part of a path only (`agents.1` stays). */
function mcpField(field: string): string {
  const [head = "", ...rest] = field.split(".");
  const name = Object.hasOwn(MCP_NAMES, head) ? MCP_NAMES[head as keyof typeof MCP_NAMES] : head;
  return [name, ...rest].join(".");
}
