import type { Agent, Budget, Price } from "@corral/shared";
import { stringify } from "yaml";
import type { NewAgentRow } from "../db/registry.js";
import { providerOf } from "./providers.js";

/** Fields the file writes as `provider` (with `api`), or never: identity, times and what the server works out. */
const NOT_WRITTEN = new Set([
  "name",
  "kind",
  "provider",
  "api",
  "builtin",
  "source",
  "readable",
  "answerIsOutput",
  "resumes",
  "effectiveModel",
  "createdAt",
  "updatedAt",
  "env",
]);

export interface ExportInput {
  agents: Agent[];
  budgets: Budget[];
  prices: Price[];
  /** A new agent's row of that kind, whose values an agent need not write. */
  defaults: (name: string, kind: string) => NewAgentRow;
}

/**
 * A config file declaring these agents, budgets and prices. An agent's `env` is left out: its
 * values are often keys. Model API keys are never in an agent, only `apiKeyEnv`, the variable's name.
 */
export function exportConfig({ agents, budgets, prices, defaults }: ExportInput): string {
  const withEnv: string[] = [];
  const declared = Object.fromEntries(
    agents.map((agent) => {
      const base = defaults(agent.name, agent.kind) as Record<string, unknown>;
      if (Object.keys(agent.env).length) withEnv.push(`${agent.name} (${Object.keys(agent.env).join(", ")})`);
      const fields: Record<string, unknown> = { provider: providerOf(agent) };
      for (const [key, value] of Object.entries(agent)) {
        if (NOT_WRITTEN.has(key)) continue;
        // An API agent's endpoint and key variable are written even when they are its provider's defaults, so the file says where it goes.
        const always = agent.api !== null && (key === "model" || key === "baseUrl" || key === "apiKeyEnv");
        if (always ? value !== null : JSON.stringify(value ?? null) !== JSON.stringify(base[key] ?? null)) fields[key] = value;
      }
      return [agent.name, fields];
    }),
  );
  const file = {
    agents: declared,
    ...(budgets.length && {
      budgets: budgets.map((b) => ({
        provider: b.provider,
        period: b.period,
        ...(b.maxCostUsd !== null && { maxCostUsd: b.maxCostUsd }),
        ...(b.maxTokens !== null && { maxTokens: b.maxTokens }),
      })),
    }),
    ...(prices.length && {
      prices: prices.map((p) => ({
        provider: p.provider,
        model: p.model,
        inputPerM: p.inputPerM,
        outputPerM: p.outputPerM,
        ...(p.cachedInputPerM !== null && { cachedInputPerM: p.cachedInputPerM }),
      })),
    }),
  };
  const header = [
    '# Corral agents, budgets and prices (docs/agents.md, "Agents in a file"). Keys are never exported: an API agent names the variable that holds its key (apiKeyEnv).',
    ...(withEnv.length ? [`# Left out, as env values are often secrets: the env of ${withEnv.join("; ")}.`] : []),
  ];
  return `${header.join("\n")}\n${stringify(file, { lineWidth: 0 })}`;
}
