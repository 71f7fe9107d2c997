import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunnerRow } from "../schema.js";
import { DIALECTS, type TestRegistry } from "./dialects.js";

const T = 2 ** 41;
const runner = (id: string, startedAt: number): RunnerRow => ({
  id,
  name: `box "${id}" ✓`,
  labels: ["gpu", "codex", "host-1.lan"],
  hostname: "host-1.lan",
  version: "0.17.0",
  startedAt,
  heartbeatAt: startedAt,
  stoppedAt: null,
});

describe.each(DIALECTS)("the runners repository on $dialect", ({ open }) => {
  let registry: TestRegistry;
  beforeEach(async () => {
    registry = await open();
  });
  afterEach(() => registry.close());

  it("registers runners and lists them, the first started first, with their labels as given", async () => {
    const { runners } = registry;
    await runners.register(runner("b", T + 2));
    await runners.register(runner("a", T + 1));
    await runners.register(runner("c", T + 2));
    expect(await runners.get("a")).toEqual(runner("a", T + 1));
    expect(await runners.get("ghost")).toBeUndefined();
    expect((await runners.list()).map((r) => r.id)).toEqual(["a", "b", "c"]);
    // An id is one start of one runner: registering it again is refused.
    await expect(runners.register(runner("a", T + 5))).rejects.toThrow();
  });

  it("stores each heartbeat, saying whether the runner is known", async () => {
    const { runners } = registry;
    await runners.register(runner("a", T));
    expect(await runners.heartbeat("a", T + 2000)).toBe(true);
    expect(await runners.heartbeat("ghost", T + 2000)).toBe(false);
    expect(await runners.get("a")).toMatchObject({ startedAt: T, heartbeatAt: T + 2000, stoppedAt: null });
  });

  it("marks a runner stopped once, keeping the first time it said so", async () => {
    const { runners } = registry;
    await runners.register(runner("a", T));
    expect(await runners.markStopped("a", T + 10)).toBe(true);
    expect(await runners.markStopped("a", T + 20)).toBe(false);
    expect(await runners.markStopped("ghost", T + 20)).toBe(false);
    expect(await runners.get("a")).toMatchObject({ stoppedAt: T + 10 });
  });

  it("keeps nothing of a rolled-back transaction", async () => {
    await expect(
      registry.transaction(async (tx) => {
        await tx.runners.register(runner("a", T));
        expect(await tx.runners.list()).toHaveLength(1);
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(await registry.runners.list()).toEqual([]);
  });
});
