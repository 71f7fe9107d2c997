import type { RetryPolicy } from "@corral/shared";

/**
 * What a launch asks of the job engine, the same from every door: REST's body is already in these
 * names, MCP maps its tools' snake_case arguments into them (mcp/launch-input.ts), the CLI goes
 * through REST. A refusal names the field in these names; each door spells it back as its caller did.
 */
export interface LaunchRequest {
  prompt: string;
  /** Default: the agent's workdir (a follow-up's: the earlier turn's). */
  workdir?: string;
  /** Default: the agent's model (a follow-up's: the earlier turn's). */
  model?: string;
  /** Seconds before the job is killed. Default: the agent's timeout. */
  timeoutS?: number;
  /** The job ends budget_exceeded once its cost passes this many USD. */
  maxCostUsd?: number;
  /** The job ends budget_exceeded once its tokens (input + output) pass this. */
  maxTokens?: number;
  /** Default: the agent's policy. */
  retry?: RetryPolicy;
  /** Run while another job is queued or running in the same workdir. */
  sharedWorkdir?: boolean;
  /** Run in a new git worktree of the workdir's repository (worktrees/git-worktree.ts). */
  worktree?: boolean;
  /** What the worktree starts from: a branch, tag or commit. Default: HEAD. */
  base?: string;
  /** An earlier job of the same agent whose conversation this one continues. */
  session?: string;
  /** The job this launch runs again (Relaunch in the panel): recorded on the job, which must exist. */
  relaunchOf?: string;
}
