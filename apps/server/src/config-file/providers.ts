import type { ModelApi } from "@corral/shared";

/** What an orchestrator-style `provider` means in Corral: an agent kind, and for model APIs how to reach them. */
export interface ProviderMapping {
  kind: string;
  /** The agent's provider in Corral: the one its budgets and prices are kept under. */
  provider: string;
  /** The model named in `provider` (`openai/gpt-4o`), if any. */
  model: string | null;
  api: ModelApi | null;
  baseUrl: string | null;
  apiKeyEnv: string | null;
}

interface ModelApiProvider {
  api: ModelApi;
  /** Null: the API's own default endpoint. */
  baseUrl: string | null;
  /** The variable LiteLLM reads the key from, which the orchestrator's users already set. */
  apiKeyEnv: string;
  /** The provider name Corral's price table and budgets use. */
  provider: string;
}

const API_KIND = "api";

/**
 * LiteLLM's provider prefixes Corral reaches through one of its three wire formats. Others that
 * speak OpenAI's format work as `openai/<model>` with a `baseUrl` and an `apiKeyEnv`.
 */
const MODEL_API_PROVIDERS: Record<string, ModelApiProvider> = {
  openai: { api: "openai", baseUrl: null, apiKeyEnv: "OPENAI_API_KEY", provider: "openai" },
  anthropic: { api: "anthropic", baseUrl: null, apiKeyEnv: "ANTHROPIC_API_KEY", provider: "anthropic" },
  gemini: { api: "google", baseUrl: null, apiKeyEnv: "GEMINI_API_KEY", provider: "google" },
  google: { api: "google", baseUrl: null, apiKeyEnv: "GEMINI_API_KEY", provider: "google" },
  openrouter: { api: "openai", baseUrl: "https://openrouter.ai/api/v1", apiKeyEnv: "OPENROUTER_API_KEY", provider: "openrouter" },
  groq: { api: "openai", baseUrl: "https://api.groq.com/openai/v1", apiKeyEnv: "GROQ_API_KEY", provider: "groq" },
  deepseek: { api: "openai", baseUrl: "https://api.deepseek.com/v1", apiKeyEnv: "DEEPSEEK_API_KEY", provider: "deepseek" },
  mistral: { api: "openai", baseUrl: "https://api.mistral.ai/v1", apiKeyEnv: "MISTRAL_API_KEY", provider: "mistral" },
  xai: { api: "openai", baseUrl: "https://api.x.ai/v1", apiKeyEnv: "XAI_API_KEY", provider: "xai" },
};

/** The orchestrator's names for CLIs Corral runs under another kind name. */
const CLI_ALIASES: Record<string, string> = { "claude-code": "claude", "gemini-cli": "gemini", "kiro-cli": "kiro" };

export class ProviderError extends Error {}

/**
 * Maps a `provider` as the orchestrator's users write it: a CLI (`gemini`, `claude-code`,
 * `opencode`…) is that kind of agent; `ollama/<model>` an Ollama agent; a model API
 * (`openai/gpt-4o`, `anthropic`, `openrouter/…`) an `api` agent. A bare CLI name wins over the
 * API of the same name (`gemini` is the Gemini CLI, `gemini/<model>` the Gemini API).
 */
export function mapProvider(value: string, kinds: readonly string[], kindProvider: (kind: string) => string): ProviderMapping {
  const slash = value.indexOf("/");
  const prefix = (slash < 0 ? value : value.slice(0, slash)).toLowerCase();
  const model = slash < 0 ? null : value.slice(slash + 1);
  if (model === "") throw new ProviderError(`name the model after the slash, as in ${prefix}/<model>`);
  const cli = CLI_ALIASES[prefix] ?? prefix;
  const plain = { api: null, baseUrl: null, apiKeyEnv: null };
  if (model === null && cli !== API_KIND && kinds.includes(cli)) return { kind: cli, provider: kindProvider(cli), model: null, ...plain };
  if ((prefix === "ollama" || prefix === "ollama_chat") && kinds.includes("ollama")) {
    return { kind: "ollama", provider: kindProvider("ollama"), model, ...plain };
  }
  const known = MODEL_API_PROVIDERS[prefix];
  if (!known) {
    const cliKinds = kinds.filter((k) => k !== API_KIND).join(", ");
    throw new ProviderError(
      `unknown provider ${value}: use a CLI (${cliKinds}), ollama/<model>, or a model API (${Object.keys(MODEL_API_PROVIDERS).join(", ")}, as in openai/gpt-4o); ` +
        "another OpenAI-compatible server is openai/<model> with its baseUrl and apiKeyEnv",
    );
  }
  if (!kinds.includes(API_KIND)) throw new ProviderError(`${value} needs the api agent kind, which this server does not have`);
  return { kind: API_KIND, provider: known.provider, model, api: known.api, baseUrl: known.baseUrl, apiKeyEnv: known.apiKeyEnv };
}

/** The `provider` to write for an agent, so that reading it back (`mapProvider`) gives the same agent. */
export function providerOf(row: { kind: string; provider: string; api: ModelApi | null }): string {
  if (row.kind !== API_KIND) return row.kind;
  const same = MODEL_API_PROVIDERS[row.provider];
  return same && same.api === row.api ? row.provider : (row.api ?? "openai");
}
