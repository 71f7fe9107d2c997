import type { AppConfig } from "../config.js";
import type { AgentRow } from "../db/schema.js";
import { inheritedEnv, withAgentEnv } from "./inherited-env.js";
import { cliAdapterFor } from "./kind-lookup.js";

const ownEnv = (kind: string, model: string | null, agent?: AgentRow) => cliAdapterFor(kind)?.ownEnv(model, agent) ?? [];

/**
 * A CLI worker's whole environment (nothing else is inherited): the basics, what its kind
 * declares it needs for the job's model (its keys), CORRAL_PASS_ENV, then the agent's env.
 * Never CORRAL_*, never another kind's keys.
 */
export function workerEnv(agent: AgentRow, config: AppConfig, model: string | null): Record<string, string> {
  return withAgentEnv(inheritedEnv(config, ownEnv(agent.kind, model ?? agent.model, agent)), agent.env);
}

/** A `--version` probe's: as a worker of the kind, without the agent's env (listing agents must not run what an agent's editor chose). */
export function probeEnv(kind: string, config: AppConfig): Record<string, string> {
  return inheritedEnv(config, ownEnv(kind, null));
}
