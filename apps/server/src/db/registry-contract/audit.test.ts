import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NewAuditRow } from "../registry.js";
import { DIALECTS, type TestRegistry } from "./dialects.js";

const entry = (jobId: string, at: number, more: Partial<NewAuditRow> = {}): NewAuditRow => ({
  at,
  action: "launch",
  jobId,
  agent: "gemini",
  door: "mcp",
  client: "claude-code/2.0",
  ...more,
});

describe.each(DIALECTS)("the audit repository on $dialect", ({ open }) => {
  let registry: TestRegistry;
  beforeEach(async () => {
    registry = await open();
  });
  afterEach(() => registry.close());

  it("stores each entry with the next id, a missing client as null, quotes and unicode as given", async () => {
    const { audit } = registry;
    const first = await audit.insert(entry("j1", 2 ** 41));
    const second = await audit.insert(entry("j2", 2 ** 41 + 1, { action: "cancel", door: "rest", client: undefined }));
    const third = await audit.insert(entry("j3", 5, { client: `curl "it's" ✓ 🐄` }));
    expect(first).toEqual({ id: 1, ...entry("j1", 2 ** 41) });
    expect(second).toEqual({ id: 2, at: 2 ** 41 + 1, action: "cancel", jobId: "j2", agent: "gemini", door: "rest", client: null });
    expect(third.client).toBe(`curl "it's" ✓ 🐄`);
  });

  it("lists newest first, a page at a time, with the total, for every job or one", async () => {
    const { audit } = registry;
    expect(await audit.list({ limit: 10, offset: 0 })).toEqual({ rows: [], total: 0 });
    for (let i = 1; i <= 5; i++) await audit.insert(entry(i % 2 ? "odd" : "even", 100 - i));
    const page = await audit.list({ limit: 2, offset: 1 });
    expect(page.total).toBe(5);
    expect(page.rows.map((r) => r.id)).toEqual([4, 3]);
    expect((await audit.list({ limit: 10, offset: 0, jobId: "odd" })).rows.map((r) => r.id)).toEqual([5, 3, 1]);
    expect(await audit.list({ limit: 10, offset: 0, jobId: "none" })).toEqual({ rows: [], total: 0 });
    expect(await audit.list({ limit: 10, offset: Number.MAX_SAFE_INTEGER })).toEqual({ rows: [], total: 5 });
  });

  it("keeps nothing of a rolled-back transaction", async () => {
    await expect(
      registry.transaction(async (tx) => {
        await tx.audit.insert(entry("j1", 1));
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(await registry.audit.list({ limit: 10, offset: 0 })).toEqual({ rows: [], total: 0 });
  });
});
