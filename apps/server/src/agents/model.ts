import type { AppConfig } from "../config.js";
import type { AgentRow } from "../db/schema.js";

/** The model a job runs with when it names none. */
export function effectiveModel(agent: AgentRow, config: AppConfig): string | null {
  return agent.model ?? config.defaultModels[agent.name] ?? null;
}
