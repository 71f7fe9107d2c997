import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agentRow, jobRow } from "./rows.js";
import { DIALECTS, type TestRegistry } from "./dialects.js";

describe.each(DIALECTS)("the agents repository on $dialect", ({ open }) => {
  let registry: TestRegistry;
  beforeEach(async () => {
    registry = await open();
  });
  afterEach(() => registry.close());

  it("stores every column as given: JSON, booleans, nulls, defaults, quotes and unicode, times past 2^31", async () => {
    const { agents } = registry;
    const later = 2 ** 41 + 7;
    const full = await agents.insert(
      agentRow("qwen", {
        maxConcurrent: 2,
        kind: "api",
        model: "qwen3:8b",
        env: { KEY: 'it\'s "quoted" ✓', EMPTY: "" },
        enabled: false,
        command: "ollama",
        args: ["run", "--flag=a b", "ünï"],
        baseUrl: "http://127.0.0.1:11434",
        description: "Says 'hello' — 日本語 🐄",
        retry: { maxAttempts: 3, exitCodes: [1, 137], outputPatterns: ['rate limit "429"'], backoffS: 5 },
        sandbox: "bwrap",
        api: "openai",
        apiKeyEnv: "QWEN_KEY",
        role: 'You are\na "helper".',
        tools: ["read_file", "bash"],
        allowedHosts: ["example.com"],
        maxSteps: 12,
        sessions: ["review", "build-42", "B.2_x"],
        source: "file",
        builtin: true,
        createdAt: later,
        updatedAt: later + 1,
      }),
    );
    expect(await agents.get("qwen")).toEqual(full);
    expect(full).toMatchObject({ enabled: false, builtin: true, createdAt: later, updatedAt: later + 1, args: ["run", "--flag=a b", "ünï"] });

    const bare = await agents.insert(agentRow("bare", { maxConcurrent: 1 }));
    expect(bare).toMatchObject({
      model: null,
      command: null,
      args: null,
      baseUrl: null,
      retry: null,
      tools: null,
      allowedHosts: null,
      maxSteps: null,
      permissions: null,
    });
    expect(bare).toMatchObject({ description: "", sandbox: "none", source: "registry", sessions: [] });
  });

  it("lists agents by name in SQLite's byte order, and refuses a second agent of the same name", async () => {
    const { agents } = registry;
    for (const name of ["é-agent", "b", "B", "a", "Z", "a-b"]) await agents.insert(agentRow(name));
    expect((await agents.list()).map((a) => a.name)).toEqual(["B", "Z", "a", "a-b", "b", "é-agent"]);
    await expect(agents.insert(agentRow("a", { maxConcurrent: 5 }))).rejects.toThrow();
    expect((await agents.get("a"))?.maxConcurrent).toBe(1);
  });

  it("answers undefined or false for an agent that is not there", async () => {
    const { agents } = registry;
    expect(await agents.list()).toEqual([]);
    expect(await agents.get("ghost")).toBeUndefined();
    expect(await agents.update("ghost", { maxConcurrent: 2 })).toBeUndefined();
    expect(await agents.delete("ghost")).toBe(false);
  });

  it("adds only the missing agents, keeping what users changed, and updates what it is asked to", async () => {
    const { agents } = registry;
    await agents.insert(agentRow("gemini", { maxConcurrent: 1, description: "mine" }));
    await agents.insertMissing([
      agentRow("gemini", { maxConcurrent: 4 }),
      agentRow("codex", { maxConcurrent: 2 }),
      agentRow("codex", { maxConcurrent: 3 }),
    ]);
    await agents.insertMissing([]);
    expect((await agents.list()).map((a) => [a.name, a.maxConcurrent, a.description])).toEqual([
      ["codex", 2, ""],
      ["gemini", 1, "mine"],
    ]);
    const updated = await agents.update("gemini", { env: { A: "1" }, args: null, enabled: false, sessions: ["review"], updatedAt: 2 ** 40 });
    expect(updated).toMatchObject({
      name: "gemini",
      env: { A: "1" },
      args: null,
      enabled: false,
      sessions: ["review"],
      updatedAt: 2 ** 40,
      description: "mine",
    });
    expect(await agents.get("gemini")).toEqual(updated);
    // Back to every session: an empty list, never null.
    expect((await agents.update("gemini", { sessions: [] }))?.sessions).toEqual([]);
    expect((await agents.get("gemini"))?.sessions).toEqual([]);
  });

  it("renames an agent, its jobs following it", async () => {
    const { agents } = registry;
    await agents.insert(agentRow("old", { maxConcurrent: 1 }));
    await registry.insertJobs([jobRow("j1", { agent: "old", inputTokens: 1 })]);
    expect((await agents.update("old", { name: "new" }))?.name).toBe("new");
    expect(await agents.get("old")).toBeUndefined();
    expect((await registry.costs.repriceable()).map((j) => j.agent)).toEqual(["new"]);
    // An agent with jobs stays: they refer to it.
    await expect(agents.delete("new")).rejects.toThrow();
    expect((await agents.get("new"))?.name).toBe("new");
  });

  it("an agent looked up again sees every stored change at once, and never one that was rolled back", async () => {
    const { agents } = registry;
    expect(await agents.get("worker")).toBeUndefined();
    await agents.insert(agentRow("worker", { maxConcurrent: 1 }));
    expect((await agents.get("worker"))?.maxConcurrent).toBe(1);
    await agents.update("worker", { maxConcurrent: 7 });
    expect((await agents.get("worker"))?.maxConcurrent).toBe(7);

    // Read inside a transaction that is then rolled back: what it saw is not what stays. A read from
    // outside never sees the uncommitted write (PostgreSQL answers from another connection, SQLite
    // waits until the transaction has ended), so it is not awaited inside.
    let outside: Promise<unknown> = Promise.resolve();
    await expect(
      registry.transaction(async (tx) => {
        await tx.agents.update("worker", { maxConcurrent: 99 });
        expect((await tx.agents.get("worker"))?.maxConcurrent).toBe(99);
        outside = agents.get("worker");
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(((await outside) as { maxConcurrent: number }).maxConcurrent).toBe(7);
    expect((await agents.get("worker"))?.maxConcurrent).toBe(7);

    // Written inside a transaction that commits: seen once it has, whatever was read meanwhile.
    await registry.transaction(async (tx) => {
      await tx.agents.update("worker", { maxConcurrent: 8 });
      expect((await tx.agents.get("worker"))?.maxConcurrent).toBe(8);
      outside = agents.get("worker");
    });
    expect([7, 8]).toContain(((await outside) as { maxConcurrent: number }).maxConcurrent);
    expect((await agents.get("worker"))?.maxConcurrent).toBe(8);

    expect(await agents.delete("worker")).toBe(true);
    expect(await agents.get("worker")).toBeUndefined();
    await agents.insertMissing([agentRow("worker", { maxConcurrent: 3 })]);
    expect((await agents.get("worker"))?.maxConcurrent).toBe(3);
  });
});
