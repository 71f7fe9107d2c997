import { type AppConfig, toolAgentSetting } from "../config.js";
import type { AgentRow } from "../db/schema.js";

/** One set of pyCorral's tools: `<tools>_run`, `<tools>_run_async` and `<tools>_done`. */
export interface ToolSet {
  /** The tools' name prefix: an agent's name, as pyCorral's callers know it. */
  tools: string;
  /** The agent whose jobs they launch: `tools`, unless a setting points them elsewhere (`CORRAL_GEMINI_AGENT`). */
  runs: string;
  /**
   * The enabled agent they are described after: `runs`, or while that one is not enabled the agent
   * they are named after, so the tools stay and a call is refused saying which setting chose `runs`
   * (jobs/launch-plan.ts) instead of the tool vanishing.
   */
  row: AgentRow;
}

/** The tool sets the enabled agents give, keyed by prefix: one per agent, pointed as the settings say. */
export function toolSets(enabled: readonly AgentRow[], config: Pick<AppConfig, "toolAgents">): Map<string, ToolSet> {
  const byName = new Map(enabled.map((a) => [a.name, a]));
  const sets = new Map(enabled.map((a) => [a.name, { tools: a.name, runs: a.name, row: a }]));
  for (const [tools, runs] of Object.entries(config.toolAgents)) {
    const row = byName.get(runs) ?? byName.get(tools);
    if (row) sets.set(tools, { tools, runs, row });
  }
  return sets;
}

/**
 * What is wrong with the agents the settings point pyCorral's tools at, told at start: each
 * call says it too, but a user who set it should not learn it from their orchestrator first.
 */
export function toolAgentWarnings(agents: readonly Pick<AgentRow, "name" | "enabled">[], config: Pick<AppConfig, "toolAgents">): string[] {
  return Object.entries(config.toolAgents).flatMap(([tools, runs]) => {
    const agent = agents.find((a) => a.name === runs);
    if (agent?.enabled) return [];
    const setting = toolAgentSetting(tools);
    const state = agent ? "is disabled" : "does not exist";
    return [
      `${setting}=${runs} points ${tools}_run, ${tools}_run_async and /mcp/${tools} at the agent ${runs}, which ${state}: ` +
        `they fail until it is ${agent ? "enabled" : "added"} (GET /api/agents), or unset ${setting}`,
    ];
  });
}

/** Why `/mcp/<tools>` has no tools to serve, and what to do about it. */
export function noToolsReason(tools: string, config: Pick<AppConfig, "toolAgents">): string {
  // `tools` comes from the URL: an own key only, never the object's prototype (`__proto__`).
  const runs = Object.hasOwn(config.toolAgents, tools) ? config.toolAgents[tools] : undefined;
  if (runs === undefined) return `no enabled agent named ${tools}; see GET /api/agents`;
  const setting = toolAgentSetting(tools);
  return `${setting}=${runs} makes /mcp/${tools} run the agent ${runs}, and no enabled agent is named ${runs}: add or enable it (see GET /api/agents), or unset ${setting}`;
}
