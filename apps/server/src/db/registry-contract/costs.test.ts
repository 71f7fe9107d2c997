import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { CostSums } from "../registry.js";
import type { PriceOverrideRow } from "../schema.js";
import { DIALECTS, type TestRegistry } from "./dialects.js";
import { addJobs, jobRow } from "./rows.js";

const T = 2 ** 41;
const override = (provider: string, model: string, inputPerM: number, more: Partial<PriceOverrideRow> = {}): PriceOverrideRow => ({
  provider,
  model,
  inputPerM,
  outputPerM: inputPerM * 4,
  cachedInputPerM: null,
  updatedAt: T,
  ...more,
});
const none: CostSums = {
  jobs: 0,
  inputTokens: 0,
  outputTokens: 0,
  cachedInputTokens: 0,
  costUsd: null,
  reportedUsd: 0,
  estimatedUsd: 0,
  pricedJobs: 0,
  unpricedJobs: 0,
  unpricedInputTokens: 0,
  unpricedOutputTokens: 0,
  noUsageJobs: 0,
};
const hour = 3_600_000;
// Kathmandu is UTC+05:45: 20:00 UTC on Feb 28 is already Mar 1 there.
const feb28Utc20 = Date.UTC(2026, 1, 28, 20);
const feb28Utc12 = Date.UTC(2026, 1, 28, 12);

let zone: string | undefined;
beforeAll(() => {
  // The day of a job is the Corral server's local day: a zone far from UTC (and from PostgreSQL's) tells.
  zone = process.env.TZ;
  process.env.TZ = "Asia/Kathmandu";
});
afterAll(() => {
  if (zone === undefined) delete process.env.TZ;
  else process.env.TZ = zone;
});

describe.each(DIALECTS)("the costs repository on $dialect", ({ open }) => {
  let registry: TestRegistry;
  beforeEach(async () => {
    registry = await open();
  });
  afterEach(() => registry.close());

  it("keeps one price override per provider and model, in SQLite's byte order", async () => {
    const { costs } = registry;
    expect(await costs.overrides()).toEqual([]);
    expect(await costs.upsertOverride(override("openai", "gpt-5", 1.25))).toEqual(override("openai", "gpt-5", 1.25));
    await costs.upsertOverride(override("openai", "GPT-5", 2));
    await costs.upsertOverride(override("anthropic", `claude "q" it's ✓`, 3, { cachedInputPerM: 0.3 }));
    const changed = override("openai", "gpt-5", 1.5, { cachedInputPerM: 0.125, updatedAt: T + 1 });
    expect(await costs.upsertOverride(changed)).toEqual(changed);
    expect((await costs.overrides()).map((o) => [o.provider, o.model, o.inputPerM, o.cachedInputPerM])).toEqual([
      ["anthropic", `claude "q" it's ✓`, 3, 0.3],
      ["openai", "GPT-5", 2, null],
      ["openai", "gpt-5", 1.5, 0.125],
    ]);
    expect(await costs.deleteOverride("openai", "GPT-5")).toBe(true);
    expect(await costs.deleteOverride("openai", "GPT-5")).toBe(false);
    expect((await costs.overrides()).length).toBe(2);
  });

  it("keeps budgets: one per provider and period, ordered, found by id or by provider and period", async () => {
    const { costs } = registry;
    const budget = (provider: string, period: "day" | "month", maxCostUsd: number | null, maxTokens: number | null) => ({
      provider,
      period,
      maxCostUsd,
      maxTokens,
      createdAt: T,
      updatedAt: T,
    });
    expect(await costs.budgets()).toEqual([]);
    const a = await costs.insertBudget(budget("openai", "month", 20.5, null));
    const b = await costs.insertBudget(budget("Local", "day", null, 3 * 2 ** 32));
    const c = await costs.insertBudget(budget("openai", "day", 1, 1000));
    expect(a).toEqual({ id: 1, ...budget("openai", "month", 20.5, null) });
    expect(b).toEqual({ id: 2, ...budget("Local", "day", null, 3 * 2 ** 32) });
    await expect(costs.insertBudget(budget("openai", "day", 2, null))).rejects.toThrow();
    expect((await costs.budgets()).map((r) => r.id)).toEqual([b.id, c.id, a.id]);
    expect((await costs.budgets("openai")).map((r) => r.id)).toEqual([c.id, a.id]);
    expect((await costs.budgets("")).length).toBe(3);
    expect(await costs.budgets("nobody")).toEqual([]);
    expect(await costs.budget(c.id)).toEqual(c);
    expect(await costs.findBudget("openai", "month")).toEqual(a);
    expect(await costs.findBudget("Local", "month")).toBeUndefined();

    expect(await costs.updateBudget(a.id, { maxCostUsd: null, maxTokens: 7, updatedAt: T + 1 })).toEqual({
      ...a,
      maxCostUsd: null,
      maxTokens: 7,
      updatedAt: T + 1,
    });
    expect(await costs.deleteBudget(a.id)).toBe(true);
    expect(await costs.deleteBudget(a.id)).toBe(false);
    // An id that names no budget, whatever number it is.
    for (const id of [a.id, 0, -1, 2 ** 31, 2 ** 40, 1.5]) {
      expect(await costs.budget(id)).toBeUndefined();
      expect(await costs.updateBudget(id, { maxTokens: 1 })).toBeUndefined();
      expect(await costs.deleteBudget(id)).toBe(false);
    }
  });

  it("sums nothing as SQLite does: zeros, and a null cost", async () => {
    expect(await registry.costs.aggregate({ from: 0, to: T }, [])).toEqual([none]);
    expect(await registry.costs.aggregate({ from: 0, to: T }, ["provider", "day"])).toEqual([]);
  });

  it("sums usage and cost in numbers, past 2^31 tokens, grouped as asked and ordered with nulls first", async () => {
    await addJobs(registry, [
      jobRow("a", {
        agent: "gemini",
        provider: "google",
        model: "g-2",
        inputTokens: 3 * 2 ** 31,
        outputTokens: 2 ** 32,
        cachedInputTokens: 5,
        costUsd: 1.5,
        costSource: "reported",
        createdAt: feb28Utc12,
      }),
      jobRow("b", {
        agent: "gemini",
        provider: "google",
        model: "g-2",
        usageModel: "g-2-flash",
        inputTokens: 2 ** 31,
        outputTokens: 10,
        costUsd: 0.25,
        costSource: "estimated",
        createdAt: feb28Utc20,
      }),
      jobRow("c", { agent: "local", provider: null, model: null, inputTokens: 100, outputTokens: 50, createdAt: feb28Utc20 + hour }),
      jobRow("d", { agent: "local", provider: "Ollama", createdAt: feb28Utc20 + 2 * hour }),
      jobRow("e", { agent: "gemini", provider: "google", inputTokens: 9, createdAt: T }),
    ]);
    const window = { from: feb28Utc12, to: T };
    const [all] = await registry.costs.aggregate(window, []);
    expect(all).toEqual({
      jobs: 4,
      inputTokens: 4 * 2 ** 31 + 100,
      outputTokens: 2 ** 32 + 60,
      cachedInputTokens: 5,
      costUsd: 1.75,
      reportedUsd: 1.5,
      estimatedUsd: 0.25,
      pricedJobs: 2,
      unpricedJobs: 1,
      unpricedInputTokens: 100,
      unpricedOutputTokens: 50,
      noUsageJobs: 1,
    });
    const rows = await registry.costs.aggregate(window, ["provider", "model"]);
    expect(rows.map((r) => [r.provider, r.model, r.jobs, r.costUsd])).toEqual([
      [null, null, 1, null],
      ["Ollama", null, 1, null],
      ["google", "g-2", 1, 1.5],
      ["google", "g-2-flash", 1, 0.25],
    ]);
    const days = await registry.costs.aggregate(window, ["day"]);
    expect(days.map((r) => [r.day, r.jobs, r.inputTokens])).toEqual([
      ["2026-02-28", 1, 3 * 2 ** 31],
      ["2026-03-01", 3, 2 ** 31 + 100],
    ]);
    const byAgentDay = await registry.costs.aggregate({ ...window, provider: "google" }, ["agent", "day"]);
    expect(byAgentDay.map((r) => [r.agent, r.day, r.jobs])).toEqual([
      ["gemini", "2026-02-28", 1],
      ["gemini", "2026-03-01", 1],
    ]);
    expect((await registry.costs.aggregate({ ...window, agent: "local" }, ["agent"])).map((r) => [r.agent, r.jobs, r.noUsageJobs])).toEqual([
      ["local", 2, 1],
    ]);
    // The window's end is exclusive.
    expect((await registry.costs.aggregate({ from: feb28Utc12, to: feb28Utc20 }, []))[0]?.jobs).toBe(1);
  });

  it("adds costs up as SQLite does, without the drift of adding binary fractions one by one", async () => {
    // Ten jobs at $0.10 cost $1: a $1 budget is spent. Added naively, they come to 0.9999999999999999.
    await addJobs(
      registry,
      Array.from({ length: 10 }, (_, i) =>
        jobRow(`j${i}`, { provider: "openai", inputTokens: 1, costUsd: 0.1, costSource: i % 2 ? "reported" : "estimated" }),
      ),
    );
    const [sums] = await registry.costs.aggregate({ from: 0, to: T }, []);
    expect(sums).toMatchObject({ costUsd: 1, reportedUsd: 0.5, estimatedUsd: 0.5, pricedJobs: 10 });
  });

  it("reprices the jobs whose cost is not the CLI's own, in the order they were added, all or none", async () => {
    await addJobs(registry, [
      jobRow("z", { provider: "openai", model: "m", inputTokens: 10, outputTokens: 20, costUsd: 0.5, costSource: "estimated" }),
      jobRow("reported", { provider: "openai", inputTokens: 10, costUsd: 9, costSource: "reported" }),
      jobRow("a", { provider: "openai", usageModel: "u", outputTokens: 2 ** 33, cachedInputTokens: 1 }),
      jobRow("no-usage", { provider: "openai" }),
    ]);
    expect(await registry.costs.repriceable()).toEqual([
      {
        id: "z",
        agent: "worker",
        provider: "openai",
        model: "m",
        usageModel: null,
        inputTokens: 10,
        outputTokens: 20,
        cachedInputTokens: null,
        costUsd: 0.5,
        costSource: "estimated",
        attempt: 1,
      },
      {
        id: "a",
        agent: "worker",
        provider: "openai",
        model: null,
        usageModel: "u",
        inputTokens: null,
        outputTokens: 2 ** 33,
        cachedInputTokens: 1,
        costUsd: null,
        costSource: null,
        attempt: 1,
      },
    ]);
    await registry.costs.setCosts([]);
    await registry.costs.setCosts([
      { id: "z", costUsd: 1, costSource: "estimated" },
      { id: "a", costUsd: 2, costSource: "estimated" },
      { id: "z", costUsd: null, costSource: null },
      { id: "ghost", costUsd: 3, costSource: "estimated" },
    ]);
    expect((await registry.costs.repriceable()).map((r) => [r.id, r.costUsd, r.costSource])).toEqual([
      ["z", null, null],
      ["a", 2, "estimated"],
    ]);
    await expect(
      registry.transaction(async (tx) => {
        await tx.costs.setCosts([{ id: "a", costUsd: 5, costSource: "estimated" }]);
        await tx.costs.upsertOverride(override("openai", "m", 1));
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect((await registry.costs.repriceable()).map((r) => r.costUsd)).toEqual([null, 2]);
    expect(await registry.costs.overrides()).toEqual([]);
  });
});
