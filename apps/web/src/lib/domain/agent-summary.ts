import type { Agent } from "@corral/shared";

/**
 * An agent's limits as its row on the Agents page says them: "timeout 600s · 4 at once · google",
 * and " · a worktree per job" when its jobs run in a git worktree of their own unless a launch says not.
 */
export function agentLimits(agent: Pick<Agent, "timeoutS" | "maxConcurrent" | "provider" | "worktree">): string {
  return [`timeout ${agent.timeoutS}s`, `${agent.maxConcurrent} at once`, agent.provider, agent.worktree ? "a worktree per job" : null]
    .filter(Boolean)
    .join(" · ");
}
