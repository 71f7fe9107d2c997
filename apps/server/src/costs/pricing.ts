/** USD per million tokens. `cachedInputPerM` null: cached input costs the input price. */
export interface Rates {
  inputPerM: number;
  outputPerM: number;
  cachedInputPerM: number | null;
}

/** Token counts as jobs store them: `inputTokens` includes the cached part. */
export interface TokenCounts {
  inputTokens: number | null;
  outputTokens: number | null;
  cachedInputTokens: number | null;
}

export type CostSource = "reported" | "estimated";

export interface CostFields {
  costUsd: number | null;
  costSource: CostSource | null;
}

export const usedTokens = (t: TokenCounts) => (t.inputTokens ?? 0) + (t.outputTokens ?? 0);

/** tokens × price: fresh input, cached input and output each at their own rate. */
export function tokenCost(rates: Rates, tokens: TokenCounts): number {
  const input = tokens.inputTokens ?? 0;
  const cached = Math.min(tokens.cachedInputTokens ?? 0, input);
  const fresh = input - cached;
  const cachedRate = rates.cachedInputPerM ?? rates.inputPerM;
  return (fresh * rates.inputPerM + cached * cachedRate + (tokens.outputTokens ?? 0) * rates.outputPerM) / 1_000_000;
}

/**
 * The (provider, model) keys a price may be stored under, most specific first. CLIs name the
 * same model in several ways: `claude-sonnet-4-5-20250929`, `claude-opus-4-8[1m]`, and
 * OpenCode's `anthropic/claude-sonnet-4-5`, whose prefix names the provider that bills it.
 */
export function priceKeys(provider: string | null, model: string): Array<[string, string]> {
  const keys: Array<[string, string]> = [];
  const add = (p: string | null, m: string) => {
    if (p && m && !keys.some(([kp, km]) => kp === p && km === m)) keys.push([p, m]);
  };
  const variants = (m: string) => {
    const bare = m.replace(/\[[^\]]*\]$/, "");
    return [m, bare, bare.replace(/-\d{8}$/, ""), bare.replace(/-latest$/, "")];
  };
  for (const m of variants(model.trim())) add(provider, m);
  const slash = model.indexOf("/");
  if (slash > 0) {
    const prefix = model.slice(0, slash);
    const rest = model.slice(slash + 1);
    for (const m of variants(rest)) add(prefix, m);
    for (const m of variants(rest)) add(provider, m);
  }
  return keys;
}

/** Ollama's cloud models are tagged `-cloud` (`gpt-oss:120b-cloud`) or served by ollama.com. */
export function isCloudOllama(model: string | null, baseUrl: string | null): boolean {
  if (model && /(^|[:-])cloud$/.test(model)) return true;
  if (!baseUrl) return false;
  try {
    const host = new URL(baseUrl).hostname;
    return host === "ollama.com" || host.endsWith(".ollama.com");
  } catch {
    return false;
  }
}

export interface PricingInput extends TokenCounts {
  provider: string | null;
  model: string | null;
  costUsd: number | null;
  costSource: CostSource | null;
  /** True for a local Ollama model, which costs nothing. */
  local: boolean;
}

/**
 * A job's cost: the one its CLI reported, else tokens × price (estimated), else unknown (null).
 * A reported $0 for a job that used tokens is how CLIs say they have no price (OpenCode with a
 * model that has no cost in its config), so it is not taken as free.
 */
export function costOf(job: PricingInput, rates: (provider: string | null, model: string) => Rates | undefined): CostFields {
  const tokens = usedTokens(job);
  if (job.costSource === "reported" && job.costUsd !== null && (job.costUsd > 0 || tokens === 0)) {
    return { costUsd: job.costUsd, costSource: "reported" };
  }
  if (tokens === 0) return { costUsd: null, costSource: null };
  if (job.local) return { costUsd: 0, costSource: "estimated" };
  const found = job.model ? rates(job.provider, job.model) : undefined;
  return found ? { costUsd: tokenCost(found, job), costSource: "estimated" } : { costUsd: null, costSource: null };
}
