import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { McpTaskRow } from "../schema.js";
import { DIALECTS, type TestRegistry } from "./dialects.js";
import { addJobs, jobRow } from "./rows.js";

const T = 2 ** 41;
const task = (id: string, createdAt: number, more: Partial<McpTaskRow> = {}): McpTaskRow => ({
  id,
  jobId: "done",
  sessionId: "s1",
  createdAt,
  ttlMs: 60_000,
  cancelledAt: null,
  ...more,
});

describe.each(DIALECTS)("the MCP tasks repository on $dialect", ({ open }) => {
  let registry: TestRegistry;
  beforeEach(async () => {
    registry = await open();
    await addJobs(registry, [
      jobRow("done", { status: "succeeded" }),
      jobRow("going", { status: "running" }),
      jobRow("waiting", { status: "queued" }),
    ]);
  });
  afterEach(() => registry.close());

  it("stores a task, moves it to another session, and keeps the first cancel", async () => {
    const { mcpTasks } = registry;
    expect(await mcpTasks.get("t1")).toBeUndefined();
    await mcpTasks.insert(task("t1", T, { ttlMs: 2 ** 40 }));
    expect(await mcpTasks.get("t1")).toEqual(task("t1", T, { ttlMs: 2 ** 40 }));
    await mcpTasks.moveToSession("t1", `session "2" it's ✓`);
    await mcpTasks.cancel("t1", T + 5);
    await mcpTasks.cancel("t1", T + 9);
    await mcpTasks.cancel("ghost", T);
    expect(await mcpTasks.get("t1")).toMatchObject({ sessionId: `session "2" it's ✓`, cancelledAt: T + 5 });
    await expect(mcpTasks.insert(task("t1", T))).rejects.toThrow();
    // A task names a job that exists.
    await expect(mcpTasks.insert(task("t2", T, { jobId: "nope" }))).rejects.toThrow();
  });

  it("pages a session's tasks newest first, ties in SQLite's byte order of ids", async () => {
    const { mcpTasks } = registry;
    for (const [id, at] of [
      ["a", T],
      ["B", T + 1],
      ["b", T + 1],
      ["é", T + 1],
      ["Z", T + 1],
      ["c", T + 2],
    ] as const) {
      await mcpTasks.insert(task(id, at));
    }
    await mcpTasks.insert(task("other", T + 3, { sessionId: "s2" }));
    const ids = (rows: McpTaskRow[]) => rows.map((r) => r.id);
    expect(ids(await mcpTasks.page("s1", null, 10))).toEqual(["c", "é", "b", "Z", "B", "a"]);
    const first = await mcpTasks.page("s1", null, 2);
    expect(ids(first)).toEqual(["c", "é"]);
    const last = first.at(-1)!;
    expect(ids(await mcpTasks.page("s1", { createdAt: last.createdAt, id: last.id }, 3))).toEqual(["b", "Z", "B"]);
    expect(ids(await mcpTasks.page("s1", { createdAt: T + 1, id: "B" }, 10))).toEqual(["a"]);
    expect(await mcpTasks.page("s3", null, 10)).toEqual([]);
  });

  it("removes the tasks past their time to live whose job has ended, saying how many", async () => {
    const { mcpTasks } = registry;
    await mcpTasks.insert(task("expired", T, { ttlMs: 10 }));
    await mcpTasks.insert(task("just", T, { ttlMs: 20 }));
    await mcpTasks.insert(task("fresh", T, { ttlMs: 21 }));
    await mcpTasks.insert(task("running", T, { ttlMs: 1, jobId: "going" }));
    await mcpTasks.insert(task("queued", T, { ttlMs: 1, jobId: "waiting" }));
    expect(await mcpTasks.removeExpired(T + 20)).toBe(2);
    expect(await mcpTasks.removeExpired(T + 20)).toBe(0);
    expect((await mcpTasks.page("s1", null, 10)).map((r) => r.id).sort()).toEqual(["fresh", "queued", "running"]);
  });

  it("keeps nothing of a rolled-back transaction", async () => {
    await expect(
      registry.transaction(async (tx) => {
        await tx.mcpTasks.insert(task("t1", T));
        await tx.mcpTasks.cancel("t1", T);
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(await registry.mcpTasks.get("t1")).toBeUndefined();
  });
});
