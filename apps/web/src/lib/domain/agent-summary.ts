import type { Agent } from "@corral/shared";

/**
 * An agent's limits as its row on the Agents page says them: "timeout 600s · 4 at once · google",
 * " · a worktree per job" when its jobs run in a git worktree of their own unless a launch says not,
 * and " · hub sessions review, build" when it takes part in those conversation sessions only.
 */
export function agentLimits(agent: Pick<Agent, "timeoutS" | "maxConcurrent" | "provider" | "worktree" | "sessions">): string {
  return [
    `timeout ${agent.timeoutS}s`,
    `${agent.maxConcurrent} at once`,
    agent.provider,
    agent.worktree ? "a worktree per job" : null,
    agent.sessions.length ? `hub session${agent.sessions.length === 1 ? "" : "s"} ${agent.sessions.join(", ")}` : null,
  ]
    .filter(Boolean)
    .join(" · ");
}
