import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { BrowserSessionRow } from "../schema.js";
import { DIALECTS, type TestRegistry } from "./dialects.js";

const T = 2 ** 41;
const session = (id: string, lastSeenAt: number, expiresAt: number): BrowserSessionRow => ({
  id,
  secretHash: `hash-${id}`,
  userAgent: `Mozilla/5.0 "quoted" it's ✓ ${id}`,
  createdAt: T,
  lastSeenAt,
  expiresAt,
});

describe.each(DIALECTS)("the browser sessions repository on $dialect", ({ open }) => {
  let registry: TestRegistry;
  beforeEach(async () => {
    registry = await open();
  });
  afterEach(() => registry.close());

  it("finds a session by its secret's hash while it lives, and lists the live ones, last seen first", async () => {
    const { sessions } = registry;
    await sessions.insert(session("a", T + 1, T + 100));
    await sessions.insert(session("b", T + 3, T + 50));
    await sessions.insert(session("c", T + 2, T + 10));
    expect(await sessions.findLive("hash-a", T + 99)).toEqual(session("a", T + 1, T + 100));
    // Expiry is exclusive: at expiresAt it is gone.
    expect(await sessions.findLive("hash-c", T + 10)).toBeUndefined();
    expect(await sessions.findLive("hash-unknown", 0)).toBeUndefined();
    expect((await sessions.listLive(T + 10)).map((s) => s.id)).toEqual(["b", "a"]);
    expect(await sessions.listLive(T + 100)).toEqual([]);
    // A second session with the same secret is refused.
    await expect(sessions.insert({ ...session("d", T, T), secretHash: "hash-a" })).rejects.toThrow();
  });

  it("keeps a session alive when touched", async () => {
    const { sessions } = registry;
    await sessions.insert(session("a", T, T + 10));
    await sessions.touch("a", T + 20, T + 2 ** 33);
    await sessions.touch("ghost", 1, 1);
    expect(await sessions.findLive("hash-a", T + 11)).toMatchObject({ lastSeenAt: T + 20, expiresAt: T + 2 ** 33 });
  });

  it("removes one session, the expired ones, or all, saying how many", async () => {
    const { sessions } = registry;
    expect(await sessions.removeAll()).toBe(0);
    for (const [id, expires] of [
      ["a", T + 10],
      ["b", T + 20],
      ["c", T + 30],
      ["d", T + 40],
    ] as const) {
      await sessions.insert(session(id, T, expires));
    }
    expect(await sessions.remove("a")).toBe(true);
    expect(await sessions.remove("a")).toBe(false);
    expect(await sessions.removeExpired(T + 20)).toBe(1);
    expect(await sessions.removeExpired(T + 20)).toBe(0);
    expect(await sessions.removeAll()).toBe(2);
    expect(await sessions.listLive(0)).toEqual([]);
  });

  it("keeps nothing of a rolled-back transaction", async () => {
    await registry.sessions.insert(session("a", T, T + 10));
    await expect(
      registry.transaction(async (tx) => {
        await tx.sessions.insert(session("b", T, T + 10));
        expect(await tx.sessions.removeAll()).toBe(2);
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect((await registry.sessions.listLive(0)).map((s) => s.id)).toEqual(["a"]);
  });
});
