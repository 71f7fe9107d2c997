// Where an API agent's requests go and with which key: read by availability checks without
// loading the AI SDK, which comes with the first API job (agents/kinds/api.ts).
import type { ModelApi } from "@corral/shared";
import type { AppConfig } from "../../config.js";
import type { AgentRow } from "../../db/schema.js";

/** Where each API is when the agent names no baseUrl: the provider's own. */
export const DEFAULT_BASE_URLS: Record<ModelApi, string> = {
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com/v1",
  google: "https://generativelanguage.googleapis.com/v1beta",
};

export function apiOf(agent: AgentRow): ModelApi {
  if (!agent.api) throw new Error(`agent ${agent.name} has no api: set it to openai (or any OpenAI-compatible server), anthropic or google`);
  return agent.api;
}

export const apiBaseUrl = (agent: AgentRow) => (agent.baseUrl ?? DEFAULT_BASE_URLS[apiOf(agent)]).replace(/\/+$/, "");

/**
 * The key, read when a job runs from the agent's env, else the server's environment; never stored.
 * An agent without apiKeyEnv sends none (a local server: LM Studio, vLLM, Ollama's /v1).
 */
export function apiKey(agent: AgentRow, config: AppConfig): string | undefined {
  if (!agent.apiKeyEnv) return undefined;
  const key = agent.env[agent.apiKeyEnv] ?? config.serverEnv[agent.apiKeyEnv];
  if (!key) {
    throw new Error(
      `agent ${agent.name} reads its API key from ${agent.apiKeyEnv}, which is not set: set it in the server's environment or the agent's env`,
    );
  }
  return key;
}
