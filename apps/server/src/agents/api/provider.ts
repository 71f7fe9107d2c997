import { createAnthropic } from "@ai-sdk/anthropic";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { LanguageModel } from "ai";
import type { AgentRow } from "../../db/schema.js";
import { apiBaseUrl, apiOf } from "./endpoint.js";

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
