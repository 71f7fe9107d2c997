import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { StoredMessage } from "../registry.js";
import { DIALECTS, type TestRegistry } from "./dialects.js";
import { addJobs, jobRow } from "./rows.js";

const user = (content: string): StoredMessage => ({ role: "user", content, toolCalls: null, toolName: null });
const calls = [{ function: { name: "read_file", arguments: { path: `a "quoted" it's/ünï.txt`, n: 2 ** 40, deep: [null, true, 1.5] } } }];
const assistant: StoredMessage = { role: "assistant", content: "", toolCalls: calls, toolName: null };
const tool: StoredMessage = { role: "tool", content: "line 1\nline 2 — 🐄", toolCalls: null, toolName: "read_file" };

describe.each(DIALECTS)("the job messages repository on $dialect", ({ dialect, open }) => {
  let registry: TestRegistry;
  beforeEach(async () => {
    registry = await open();
    // j1 <- j2 <- j3 <- j4: each a follow-up of the one before; j3 kept no messages.
    await addJobs(registry, [
      jobRow("j1"),
      jobRow("j2", { followUpOf: "j1" }),
      jobRow("j3", { followUpOf: "j2" }),
      jobRow("j4", { followUpOf: "j3" }),
      jobRow("alone"),
    ]);
  });
  afterEach(() => registry.close());

  it("gives back a conversation message by message, tool calls as JSON, oldest turn first", async () => {
    const { jobMessages } = registry;
    expect(await jobMessages.began("j1")).toBe(false);
    // Stored out of order: read back in seq order.
    await jobMessages.append("j1", 2, tool);
    await jobMessages.append("j1", 0, user("first"));
    await jobMessages.append("j1", 1, assistant);
    await jobMessages.append("j2", 0, user("second"));
    await jobMessages.append("j4", 0, user("fourth"));
    expect(await jobMessages.began("j1")).toBe(true);
    expect(await jobMessages.turns("j1", 10)).toEqual([[user("first"), assistant, tool]]);
    expect(await jobMessages.turns("j4", 10)).toEqual([[user("first"), assistant, tool], [user("second")], [user("fourth")]]);
    // At most maxTurns jobs back, counting j4 and the silent j3.
    expect(await jobMessages.turns("j4", 3)).toEqual([[user("second")], [user("fourth")]]);
    expect(await jobMessages.turns("j4", 1)).toEqual([[user("fourth")]]);
    expect(await jobMessages.turns("j4", 0)).toEqual([[user("fourth")]]);
    expect(await jobMessages.turns("alone", 10)).toEqual([]);
    expect(await jobMessages.turns("ghost", 10)).toEqual([]);
    await expect(jobMessages.append("j1", 0, user("again"))).rejects.toThrow();
  });

  it("restarts a job's conversation, leaving the others", async () => {
    const { jobMessages } = registry;
    await jobMessages.append("j1", 0, user("first"));
    await jobMessages.append("j2", 0, user("second"));
    await jobMessages.restart("j2");
    await jobMessages.restart("ghost");
    expect(await jobMessages.began("j2")).toBe(false);
    expect(await jobMessages.turns("j2", 10)).toEqual([[user("first")]]);
  });

  it("stores what a worker printed even with a NUL in it, which PostgreSQL keeps as U+FFFD", async () => {
    const { jobMessages } = registry;
    const nul = dialect === "PostgreSQL" ? "\ufffd" : "\u0000";
    await jobMessages.append("j1", 0, { role: "tool", content: "bin\u0000ary", toolCalls: null, toolName: "bash\u0000" });
    await jobMessages.append("j1", 1, { role: "assistant", content: "", toolCalls: [{ "k\u0000": ["v\u0000", 1, null] }], toolName: null });
    expect(await jobMessages.turns("j1", 1)).toEqual([
      [
        { role: "tool", content: `bin${nul}ary`, toolCalls: null, toolName: `bash${nul}` },
        { role: "assistant", content: "", toolCalls: [{ [`k${nul}`]: [`v${nul}`, 1, null] }], toolName: null },
      ],
    ]);
  });

  it("keeps nothing of a rolled-back transaction", async () => {
    await registry.jobMessages.append("j1", 0, user("kept"));
    await expect(
      registry.transaction(async (tx) => {
        await tx.jobMessages.restart("j1");
        await tx.jobMessages.append("j1", 0, user("dropped"));
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(await registry.jobMessages.turns("j1", 1)).toEqual([[user("kept")]]);
  });
});
