import { createAnthropic } from "@ai-sdk/anthropic";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { ModelApi } from "@corral/shared";
import type { LanguageModel } from "ai";
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
  const key = agent.env[agent.apiKeyEnv] ?? config.workerEnv[agent.apiKeyEnv];
  if (!key) {
    throw new Error(
      `agent ${agent.name} reads its API key from ${agent.apiKeyEnv}, which is not set: set it in the server's environment or the agent's env`,
    );
  }
  return key;
}

/**
 * One path for every API: Chat Completions through the OpenAI-compatible provider (OpenAI itself,
 * OpenRouter, vLLM, LM Studio, a LiteLLM proxy, Ollama's /v1 all speak it), Anthropic's Messages
 * API and Google's Gemini API through their own providers.
 */
export function languageModel(agent: AgentRow, model: string, key: string | undefined, fetchImpl?: typeof fetch): LanguageModel {
  const baseURL = apiBaseUrl(agent);
  switch (apiOf(agent)) {
    case "openai":
      // includeUsage asks for the usage chunk at the end of a stream (stream_options.include_usage).
      return createOpenAICompatible({ name: agent.name, baseURL, apiKey: key, includeUsage: true, fetch: fetchImpl }).chatModel(model);
    case "anthropic":
      return createAnthropic({ baseURL, apiKey: key ?? "", fetch: fetchImpl })(model);
    case "google":
      return createGoogleGenerativeAI({ baseURL, apiKey: key ?? "", fetch: fetchImpl })(model);
  }
}
