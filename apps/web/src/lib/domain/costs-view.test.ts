import { describe, expect, it } from "vitest";
import { labelStride, niceTicks } from "./chart-scale.js";
import { costChart, daysOf } from "./cost-chart.js";
import { priceBody, priceDraftErrors } from "./price-form.js";
import { providerColour, providerSlot, SERIES_SLOTS } from "./provider-colours.js";

describe("provider colours", () => {
  it("give each known provider its own slot, and any provider the same slot every time", () => {
    const known = ["anthropic", "openai", "google", "ollama", "aws", "opencode", "local"].map(providerSlot);
    expect(new Set(known).size).toBe(known.length);
    for (const p of ["mistral", "deepseek", "x"]) {
      expect(providerSlot(p)).toBe(providerSlot(p));
      expect(providerSlot(p)).toBeGreaterThanOrEqual(known.length);
      expect(providerSlot(p)).toBeLessThan(SERIES_SLOTS);
    }
    expect(providerColour("openai")).toBe("var(--series-1)");
  });
});

describe("chart scale", () => {
  it("ticks from 0 past the largest bar at 1, 2 or 5 × a power of ten", () => {
    expect(niceTicks(0)).toEqual([0]);
    expect(niceTicks(0.0134)).toEqual([0, 0.005, 0.01, 0.015]);
    expect(niceTicks(7)).toEqual([0, 2, 4, 6, 8]);
    expect(niceTicks(0.3)).toEqual([0, 0.1, 0.2, 0.3]);
    expect(niceTicks(1234)).toEqual([0, 500, 1000, 1500]);
  });

  it("labels every bar when they fit, and every n-th when not", () => {
    expect(labelStride(40, 36)).toBe(1);
    expect(labelStride(10, 36)).toBe(4);
  });
});

describe("price form", () => {
  it("says in words what is missing or wrong, field by field", () => {
    const errors = priceDraftErrors({ provider: "", model: " ", input: "", output: "abc", cached: "" });
    expect(Object.keys(errors).sort()).toEqual(["inputPerM", "model", "outputPerM", "provider"]);
    expect(Object.values(errors).join(" ")).not.toMatch(/expected|too small|invalid_type|>=/i);
    expect(priceDraftErrors({ provider: "OpenAI", model: "m", input: "-1", output: "20000", cached: "-0.1" })).toEqual({
      provider: expect.stringContaining("lowercase"),
      inputPerM: "A price cannot be negative.",
      outputPerM: expect.stringContaining("decimal point"),
      cachedInputPerM: "A price cannot be negative.",
    });
  });

  it("a good draft has no errors and becomes the request body", () => {
    const draft = { provider: "openai ", model: " gpt-5.5", input: "1.25", output: "10", cached: "" };
    expect(priceDraftErrors(draft)).toEqual({});
    expect(priceBody(draft)).toEqual({ provider: "openai", model: "gpt-5.5", inputPerM: 1.25, outputPerM: 10 });
    // A cached-input price, when given, goes with it; empty leaves cached tokens at the input price.
    expect(priceBody({ ...draft, cached: " 0.125 " })).toEqual({
      provider: "openai",
      model: "gpt-5.5",
      inputPerM: 1.25,
      outputPerM: 10,
      cachedInputPerM: 0.125,
    });
    expect(priceDraftErrors({ ...draft, cached: "abc" }).cachedInputPerM).toMatch(/number of dollars/);
  });
});

describe("cost chart data", () => {
  const totals = {
    jobs: 1,
    inputTokens: 0,
    outputTokens: 0,
    cachedInputTokens: 0,
    reportedUsd: 0,
    estimatedUsd: 0,
    pricedJobs: 1,
    unpricedJobs: 0,
    unpricedInputTokens: 0,
    unpricedOutputTokens: 0,
    noUsageJobs: 0,
  };

  it("has a bar for every day, quiet ones included, and a legend of the providers with a cost only", () => {
    expect(daysOf({ from: "2026-01-30", to: "2026-02-02" })).toEqual(["2026-01-30", "2026-01-31", "2026-02-01", "2026-02-02"]);
    const chart = costChart(
      {
        from: 0,
        to: 0,
        groupBy: ["day", "provider"],
        totals: { ...totals, costUsd: 3 },
        groups: [
          { ...totals, costUsd: 2, day: "2026-02-01", provider: "google" },
          { ...totals, costUsd: 1, day: "2026-02-01", provider: "anthropic" },
          { ...totals, costUsd: 0, day: "2026-02-01", provider: "ollama" },
          { ...totals, costUsd: null, unpricedJobs: 1, day: "2026-01-31", provider: "openai" },
        ],
      },
      { from: "2026-01-31", to: "2026-02-01" },
    );
    expect(chart.providers).toEqual([
      { provider: "anthropic", total: 1 },
      { provider: "google", total: 2 },
    ]);
    expect(chart.days).toEqual([
      { day: "2026-01-31", costs: {}, total: 0 },
      { day: "2026-02-01", costs: { google: 2, anthropic: 1 }, total: 3 },
    ]);
  });
});
