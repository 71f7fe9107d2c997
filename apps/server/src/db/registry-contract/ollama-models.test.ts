import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DIALECTS, type TestRegistry } from "./dialects.js";

const SERVER = "http://127.0.0.1:11434";
const T = 2 ** 41;
const facts = {
  capabilities: ["completion", "tools"],
  contextLength: 2 ** 17,
  size: 5 * 2 ** 30,
  cloud: false,
  family: `qwen "3" it's ✓`,
  extra: null,
};

describe.each(DIALECTS)("the Ollama models repository on $dialect", ({ dialect, open }) => {
  let registry: TestRegistry;
  beforeEach(async () => {
    registry = await open();
  });
  afterEach(() => registry.close());

  it("keeps each server's listing facts and probe outcomes apart, neither overwriting the other", async () => {
    const { ollamaModels } = registry;
    expect(await ollamaModels.forServer(SERVER)).toEqual([]);
    await ollamaModels.saveProbe(SERVER, "gemma3:4b", { outcome: "ok", detail: `said "hi" 🐄`, checkedAt: T });
    await ollamaModels.saveFacts(
      SERVER,
      [
        { model: "qwen3:8b", facts },
        { model: "gemma3:4b", facts: { tools: false } },
        { model: "Llama", facts: {} },
      ],
      T + 1,
    );
    await ollamaModels.saveFacts("http://gpu:11434", [{ model: "qwen3:8b", facts: { other: true } }], T + 2);
    await ollamaModels.saveProbe(SERVER, "qwen3:8b", { outcome: "failed", detail: "no tools", checkedAt: T + 3 });
    await ollamaModels.saveFacts(SERVER, [], T + 4);
    expect(await ollamaModels.forServer(SERVER)).toEqual([
      { baseUrl: SERVER, model: "Llama", facts: {}, checkedAt: T + 1, probeOutcome: null, probeDetail: null, probedAt: null },
      {
        baseUrl: SERVER,
        model: "gemma3:4b",
        facts: { tools: false },
        checkedAt: T + 1,
        probeOutcome: "ok",
        probeDetail: `said "hi" 🐄`,
        probedAt: T,
      },
      { baseUrl: SERVER, model: "qwen3:8b", facts, checkedAt: T + 1, probeOutcome: "failed", probeDetail: "no tools", probedAt: T + 3 },
    ]);
    expect(await ollamaModels.forServer("http://gpu:11434")).toEqual([
      {
        baseUrl: "http://gpu:11434",
        model: "qwen3:8b",
        facts: { other: true },
        checkedAt: T + 2,
        probeOutcome: null,
        probeDetail: null,
        probedAt: null,
      },
    ]);
  });

  it("takes a model listed twice as its last facts, and a new listing's facts over the old", async () => {
    const { ollamaModels } = registry;
    await ollamaModels.saveFacts(SERVER, [{ model: "m", facts: { v: 1 } }], 1);
    await ollamaModels.saveFacts(
      SERVER,
      [
        { model: "m", facts: { v: 2 } },
        { model: "m", facts: { v: 3 } },
      ],
      2,
    );
    expect(await ollamaModels.forServer(SERVER)).toMatchObject([{ model: "m", facts: { v: 3 }, checkedAt: 2 }]);
  });

  it("stores what a server said even with a NUL in it, which PostgreSQL keeps as U+FFFD", async () => {
    const { ollamaModels } = registry;
    const nul = dialect === "PostgreSQL" ? "\ufffd" : "\u0000";
    await ollamaModels.saveFacts(SERVER, [{ model: "m", facts: { family: "q\u0000", list: [{ "k\u0000": 1 }] } }], 1);
    await ollamaModels.saveProbe(SERVER, "m", { outcome: "failed", detail: "said \u0000", checkedAt: 2 });
    expect(await ollamaModels.forServer(SERVER)).toMatchObject([
      { model: "m", facts: { family: `q${nul}`, list: [{ [`k${nul}`]: 1 }] }, probeDetail: `said ${nul}` },
    ]);
  });

  it("keeps nothing of a rolled-back transaction", async () => {
    await registry.ollamaModels.saveFacts(SERVER, [{ model: "m", facts: { v: 1 } }], 1);
    await expect(
      registry.transaction(async (tx) => {
        await tx.ollamaModels.saveFacts(
          SERVER,
          [
            { model: "m", facts: { v: 2 } },
            { model: "n", facts: {} },
          ],
          2,
        );
        await tx.ollamaModels.saveProbe(SERVER, "m", { outcome: "ok", detail: "", checkedAt: 2 });
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(await registry.ollamaModels.forServer(SERVER)).toMatchObject([{ model: "m", facts: { v: 1 }, checkedAt: 1, probeOutcome: null }]);
  });
});
