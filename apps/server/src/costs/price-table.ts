/**
 * List prices shipped with Corral, in USD per million tokens. Data only: a newer table is a
 * new file version with a new date; users override any row through `PUT /api/costs/prices`.
 *
 * `cachedInput` is the price of a cache read. Cache writes (Anthropic) are counted as input.
 * Gemini 2.5 Pro's prompts over 200k tokens cost more; the ≤200k row is used.
 */
export interface PriceRow {
  provider: string;
  model: string;
  input: number;
  output: number;
  cachedInput: number | null;
  note?: string;
}

export const PRICE_TABLE_DATE = "2026-11-29";

export const PRICE_TABLE_SOURCES = [
  "https://www.anthropic.com/pricing#api",
  "https://ai.google.dev/gemini-api/docs/pricing",
  "https://platform.openai.com/docs/pricing",
];

export const PRICE_TABLE: readonly PriceRow[] = [
  { provider: "anthropic", model: "claude-opus-4-5", input: 5, output: 25, cachedInput: 0.5 },
  { provider: "anthropic", model: "claude-opus-4-1", input: 15, output: 75, cachedInput: 1.5 },
  { provider: "anthropic", model: "claude-opus-4", input: 15, output: 75, cachedInput: 1.5 },
  { provider: "anthropic", model: "claude-sonnet-4-5", input: 3, output: 15, cachedInput: 0.3 },
  { provider: "anthropic", model: "claude-sonnet-4", input: 3, output: 15, cachedInput: 0.3 },
  { provider: "anthropic", model: "claude-haiku-4-5", input: 1, output: 5, cachedInput: 0.1 },
  { provider: "anthropic", model: "claude-3-5-haiku", input: 0.8, output: 4, cachedInput: 0.08 },

  { provider: "google", model: "gemini-3-pro-preview", input: 2, output: 12, cachedInput: 0.2, note: "prompts ≤200k tokens" },
  { provider: "google", model: "gemini-2.5-pro", input: 1.25, output: 10, cachedInput: 0.125, note: "prompts ≤200k tokens" },
  { provider: "google", model: "gemini-2.5-flash", input: 0.3, output: 2.5, cachedInput: 0.03 },
  { provider: "google", model: "gemini-2.5-flash-lite", input: 0.1, output: 0.4, cachedInput: 0.01 },
  { provider: "google", model: "gemini-2.0-flash", input: 0.1, output: 0.4, cachedInput: 0.025 },

  { provider: "openai", model: "gpt-5.1", input: 1.25, output: 10, cachedInput: 0.125 },
  { provider: "openai", model: "gpt-5.1-codex", input: 1.25, output: 10, cachedInput: 0.125 },
  { provider: "openai", model: "gpt-5.1-codex-mini", input: 0.25, output: 2, cachedInput: 0.025 },
  { provider: "openai", model: "gpt-5", input: 1.25, output: 10, cachedInput: 0.125 },
  { provider: "openai", model: "gpt-5-codex", input: 1.25, output: 10, cachedInput: 0.125 },
  { provider: "openai", model: "gpt-5-mini", input: 0.25, output: 2, cachedInput: 0.025 },
  { provider: "openai", model: "gpt-5-nano", input: 0.05, output: 0.4, cachedInput: 0.005 },
  { provider: "openai", model: "gpt-4.1", input: 2, output: 8, cachedInput: 0.5 },
  { provider: "openai", model: "gpt-4.1-mini", input: 0.4, output: 1.6, cachedInput: 0.1 },
  { provider: "openai", model: "o4-mini", input: 1.1, output: 4.4, cachedInput: 0.275 },
  { provider: "openai", model: "o3", input: 2, output: 8, cachedInput: 0.5 },
];
