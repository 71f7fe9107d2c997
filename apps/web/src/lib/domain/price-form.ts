import type { SetPriceBody } from "@corral/shared";

/** The Set price dialog as typed: prices stay text until they are checked. */
export interface PriceDraft {
  provider: string;
  model: string;
  input: string;
  output: string;
  /** Empty: cached input tokens cost the input price. */
  cached: string;
}

export type PriceField = "provider" | "model" | "inputPerM" | "outputPerM" | "cachedInputPerM";

const MAX_PER_M = 10_000;

function priceError(text: string, what: string): string | undefined {
  const t = text.trim();
  if (!t) return `Enter the price in USD per million ${what} tokens (0 if they are free).`;
  const n = Number(t);
  if (!Number.isFinite(n)) return `Enter a number of dollars, like 1.25 (no $ sign).`;
  if (n < 0) return "A price cannot be negative.";
  if (n > MAX_PER_M) return `That is more than $${MAX_PER_M.toLocaleString("en-US")} per million tokens; check the decimal point.`;
  return undefined;
}

/** What is wrong with each field, in the panel's words (the same limits the server checks). */
export function priceDraftErrors(d: PriceDraft): Partial<Record<PriceField, string>> {
  const errors: Partial<Record<PriceField, string>> = {};
  const provider = d.provider.trim();
  if (!provider) errors.provider = "Name the provider, as the cost tables show it (openai, anthropic…).";
  else if (!/^[a-z0-9][a-z0-9._-]*$/.test(provider) || provider.length > 100)
    errors.provider = "A provider name is lowercase letters, digits, dots, dashes or underscores, like openai.";
  const model = d.model.trim();
  if (!model) errors.model = "Type the model's name, as the provider bills it (for example gpt-5.5).";
  else if (model.length > 200) errors.model = "A model name has at most 200 characters.";
  const input = priceError(d.input, "input");
  if (input) errors.inputPerM = input;
  const output = priceError(d.output, "output");
  if (output) errors.outputPerM = output;
  const cached = d.cached.trim() ? priceError(d.cached, "cached input") : undefined;
  if (cached) errors.cachedInputPerM = cached;
  return errors;
}

export function priceBody(d: PriceDraft): SetPriceBody {
  const cached = d.cached.trim();
  return {
    provider: d.provider.trim(),
    model: d.model.trim(),
    inputPerM: Number(d.input),
    outputPerM: Number(d.output),
    ...(cached ? { cachedInputPerM: Number(cached) } : {}),
  };
}
