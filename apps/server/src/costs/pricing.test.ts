import { expect, test } from "vitest";
import { costOf, isCloudOllama, priceKeys, tokenCost, type PricingInput, type Rates } from "./pricing.js";
import { PRICE_TABLE, PRICE_TABLE_DATE } from "./price-table.js";

const sonnet: Rates = { inputPerM: 3, outputPerM: 15, cachedInputPerM: 0.3 };

const job = (over: Partial<PricingInput> = {}): PricingInput => ({
  provider: "anthropic",
  model: "claude-sonnet-4-5",
  inputTokens: 2500,
  outputTokens: 52,
  cachedInputTokens: 100,
  costUsd: null,
  costSource: null,
  local: false,
  ...over,
});

const table = (provider: string | null, model: string): Rates | undefined =>
  provider === "anthropic" && model === "claude-sonnet-4-5" ? sonnet : undefined;

test("cached input is priced at its own rate, the rest of the input at the input rate", () => {
  // 2400 fresh × $3 + 100 cached × $0.30 + 52 out × $15, per million.
  expect(tokenCost(sonnet, job())).toBeCloseTo((2400 * 3 + 100 * 0.3 + 52 * 15) / 1e6, 12);
  // Without a cached price, cached tokens cost the input price.
  expect(tokenCost({ ...sonnet, cachedInputPerM: null }, job())).toBeCloseTo((2500 * 3 + 52 * 15) / 1e6, 12);
  // More cached than input (a CLI's odd counts) never makes fresh input negative.
  expect(tokenCost(sonnet, job({ inputTokens: 10, cachedInputTokens: 50, outputTokens: 0 }))).toBeCloseTo((10 * 0.3) / 1e6, 12);
});

test("a reported cost wins over the price table", () => {
  expect(costOf(job({ costUsd: 0.5, costSource: "reported" }), table)).toEqual({ costUsd: 0.5, costSource: "reported" });
});

test("without a reported cost, tokens × price is the estimate", () => {
  const cost = costOf(job(), table);
  expect(cost.costSource).toBe("estimated");
  expect(cost.costUsd).toBeCloseTo(0.00801, 9);
});

test("a model with no price is unpriced: null, never $0", () => {
  expect(costOf(job({ model: "my-finetune" }), table)).toEqual({ costUsd: null, costSource: null });
  expect(costOf(job({ model: null }), table)).toEqual({ costUsd: null, costSource: null });
});

test("a reported $0 for a job that used tokens means the CLI had no price, not that it was free", () => {
  expect(costOf(job({ model: "my-finetune", costUsd: 0, costSource: "reported" }), table)).toEqual({ costUsd: null, costSource: null });
  expect(costOf(job({ costUsd: 0, costSource: "reported" }), table).costSource).toBe("estimated");
  // With no tokens, a reported $0 is simply true (an API error before any work).
  expect(costOf(job({ inputTokens: 0, outputTokens: 0, costUsd: 0, costSource: "reported" }), table)).toEqual({ costUsd: 0, costSource: "reported" });
});

test("no usage, no cost", () => {
  expect(costOf(job({ inputTokens: null, outputTokens: null, cachedInputTokens: null }), table)).toEqual({ costUsd: null, costSource: null });
});

test("local Ollama models cost 0; cloud ones need a price", () => {
  expect(costOf(job({ provider: "ollama", model: "qwen2.5:7b", local: true }), table)).toEqual({ costUsd: 0, costSource: "estimated" });
  expect(isCloudOllama("qwen2.5:7b", "http://127.0.0.1:11434")).toBe(false);
  expect(isCloudOllama("gpt-oss:120b-cloud", "http://127.0.0.1:11434")).toBe(true);
  expect(isCloudOllama("qwen3-coder:480b", "https://ollama.com")).toBe(true);
});

test("price keys follow the ways CLIs spell a model", () => {
  expect(priceKeys("anthropic", "claude-opus-4-8[1m]")).toContainEqual(["anthropic", "claude-opus-4-8"]);
  expect(priceKeys("anthropic", "claude-sonnet-4-5-20250929")).toContainEqual(["anthropic", "claude-sonnet-4-5"]);
  // OpenCode's provider/model: the prefix is who bills it.
  expect(priceKeys("opencode", "anthropic/claude-sonnet-4-5")).toContainEqual(["anthropic", "claude-sonnet-4-5"]);
  expect(priceKeys("opencode", "anthropic/claude-sonnet-4-5")[0]).toEqual(["opencode", "anthropic/claude-sonnet-4-5"]);
});

test("the shipped table is dated and has one row per provider and model", () => {
  expect(PRICE_TABLE_DATE).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  const keys = PRICE_TABLE.map((r) => `${r.provider}/${r.model}`);
  expect(new Set(keys).size).toBe(keys.length);
  for (const row of PRICE_TABLE) {
    expect(row.input).toBeGreaterThan(0);
    expect(row.output).toBeGreaterThan(0);
  }
  // Claude's own arithmetic in the captured sample matches the table's sonnet-4-5 row.
  const row = PRICE_TABLE.find((r) => r.model === "claude-sonnet-4-5");
  expect(row && (2500 * row.input + 52 * row.output + 100 * (row.cachedInput ?? 0) + 50 * row.input * 1.25) / 1e6).toBeCloseTo(0.0084975, 9);
});
