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
  /** The model came from the agent's `model` field (a `litellm` provider's), not from `provider`. */
  modelFromField?: boolean;
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

/** A table's own entry for a name the file gives (`constructor` is no provider, tool or section, whatever Object.prototype says). */
export const ownValue = <T>(table: Record<string, T>, name: string): T | undefined => (Object.hasOwn(table, name) ? table[name] : undefined);

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

/** A provider Corral cannot map, with the fix; `field` when the fault is in another field than provider. */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly field: "model" | null = null,
  ) {
    super(message);
  }
}

/** The variable a LiteLLM proxy's key is read from, unless the agent names another (apiKeyEnv). */
const LITELLM_PROXY_KEY = "LITELLM_API_KEY";

/** Model names LiteLLM sends without a prefix, and the provider it sends them to. */
const LITELLM_BARE_MODELS: [RegExp, string][] = [
  [/^(gpt-|o[134](-|$)|chatgpt-)/, "openai"],
  [/^claude-/, "anthropic"],
];

/**
 * `provider: litellm`, as the orchestrator's users write it, with the model as LiteLLM names it:
 * through a LiteLLM proxy (`baseUrl`), an OpenAI-compatible server that takes the model name as it
 * is; else to the model's own API, as LiteLLM routes it (`gpt-4o` → OpenAI, `claude-*` → Anthropic,
 * `gemini/<model>` → Google AI Studio, `openrouter/<model>`…).
 */
function fromLiteLLM(model: string | null, baseUrl: string | null, kinds: readonly string[]): ProviderMapping {
  if (!kinds.includes(API_KIND)) throw new ProviderError(`provider litellm needs the api agent kind, which this server does not have`);
  if (model === null) {
    throw new ProviderError(
      "provider litellm needs model, as LiteLLM names it (gpt-4o, claude-sonnet-4-5, gemini/gemini-2.5-flash), or a LiteLLM proxy's baseUrl and the model name it serves",
    );
  }
  if (baseUrl !== null) {
    return { kind: API_KIND, provider: "litellm", model, api: "openai", baseUrl: null, apiKeyEnv: LITELLM_PROXY_KEY, modelFromField: true };
  }
  const slash = model.indexOf("/");
  const prefix = slash < 0 ? null : model.slice(0, slash).toLowerCase();
  const routed = prefix ?? LITELLM_BARE_MODELS.find(([pattern]) => pattern.test(model))?.[1] ?? null;
  const known = routed === null ? undefined : ownValue(MODEL_API_PROVIDERS, routed);
  if (!known || (prefix !== null && slash === model.length - 1)) {
    const why = /^gemini-/.test(model)
      ? `LiteLLM sends a bare ${model} to Vertex AI, which Corral does not reach; write gemini/${model} for Google AI Studio (GEMINI_API_KEY)`
      : `LiteLLM would send ${model} to a provider Corral does not reach`;
    throw new ProviderError(
      `${why}: name the model as gpt-…, o3…, claude-…, or <provider>/<model> for ${Object.keys(MODEL_API_PROVIDERS).join(", ")}; or give a LiteLLM proxy's baseUrl`,
      "model",
    );
  }
  const name = prefix === null ? model : model.slice(slash + 1);
  return {
    kind: API_KIND,
    provider: known.provider,
    model: name,
    api: known.api,
    baseUrl: known.baseUrl,
    apiKeyEnv: known.apiKeyEnv,
    modelFromField: true,
  };
}

/**
 * Maps a `provider` as the orchestrator's users write it: a CLI (`gemini`, `claude-code`,
 * `opencode`…) is that kind of agent; `ollama/<model>` an Ollama agent; a model API
 * (`openai/gpt-4o`, `anthropic`, `openrouter/…`) an `api` agent. A bare CLI name wins over the
 * API of the same name (`gemini` is the Gemini CLI, `gemini/<model>` the Gemini API). `litellm`
 * reads the agent's `model` (and `baseUrl`) as LiteLLM would.
 */
export function mapProvider(
  value: string,
  kinds: readonly string[],
  kindProvider: (kind: string) => string,
  fields: { model: string | null; baseUrl: string | null } = { model: null, baseUrl: null },
): ProviderMapping {
  const slash = value.indexOf("/");
  const prefix = (slash < 0 ? value : value.slice(0, slash)).toLowerCase();
  const model = slash < 0 ? null : value.slice(slash + 1);
  if (model === "") throw new ProviderError(`name the model after the slash, as in ${prefix}/<model>`);
  if (prefix === "litellm") {
    if (model !== null && fields.model !== null) throw new ProviderError(`the model is already in provider (${value}); give it once`, "model");
    return fromLiteLLM(model ?? fields.model, fields.baseUrl, kinds);
  }
  const cli = ownValue(CLI_ALIASES, prefix) ?? prefix;
  const plain = { api: null, baseUrl: null, apiKeyEnv: null };
  if (model === null && cli !== API_KIND && kinds.includes(cli)) return { kind: cli, provider: kindProvider(cli), model: null, ...plain };
  if ((prefix === "ollama" || prefix === "ollama_chat") && kinds.includes("ollama")) {
    return { kind: "ollama", provider: kindProvider("ollama"), model, ...plain };
  }
  const known = ownValue(MODEL_API_PROVIDERS, prefix);
  if (!known) {
    const cliKinds = kinds.filter((k) => k !== API_KIND).join(", ");
    throw new ProviderError(
      `unknown provider ${value}: use a CLI (${cliKinds}), ollama/<model>, litellm (with model), or a model API (${Object.keys(MODEL_API_PROVIDERS).join(", ")}, as in openai/gpt-4o); ` +
        "another OpenAI-compatible server is openai/<model> with its baseUrl and apiKeyEnv",
    );
  }
  if (!kinds.includes(API_KIND)) throw new ProviderError(`${value} needs the api agent kind, which this server does not have`);
  return { kind: API_KIND, provider: known.provider, model, api: known.api, baseUrl: known.baseUrl, apiKeyEnv: known.apiKeyEnv };
}

/** The `provider` to write for an agent, so that reading it back (`mapProvider`) gives the same agent. */
export function providerOf(row: { kind: string; provider: string; api: ModelApi | null }): string {
  if (row.kind !== API_KIND) return row.kind;
  const same = ownValue(MODEL_API_PROVIDERS, row.provider);
  return same && same.api === row.api ? row.provider : (row.api ?? "openai");
}
