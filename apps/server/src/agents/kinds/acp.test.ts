import { describe, expect, test } from "vitest";
import type { AgentRow } from "../../db/schema.js";
import type { JobSpec, UsageReport } from "../types.js";
import { stateDirsOf } from "../sandbox.js";
import { acpParser, readEvent } from "./acp.js";

const spec = (model: string | null = null): JobSpec => ({
  jobId: "abc123",
  prompt: "fix it",
  workdir: "/w",
  model,
  agent: { name: "x", kind: "acp", provider: "local", command: "opencode" } as AgentRow,
});

/** Feeds the client's JSON lines to a parser, as the job engine does; returns every streamed usage and the result. */
function run(lines: object[], model: string | null = null) {
  const parser = acpParser(spec(model));
  const streamed: UsageReport[] = [];
  for (const line of lines) {
    const usage = parser.push(`${JSON.stringify(line)}\n`, "out");
    if (usage) streamed.push(usage);
  }
  return { streamed, result: parser.finish() };
}

const chunk = (text: string, messageId?: string) => ({
  type: "update",
  update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text }, ...(messageId ? { messageId } : {}) },
});
const toolCall = (status: string) => ({
  type: "update",
  update: { sessionUpdate: "tool_call", toolCallId: "t1", title: "Edit a.txt", kind: "edit", status },
});

describe("the acp kind's parser", () => {
  test("the answer is the message after the last tool call; the session id is kept for follow-ups", () => {
    const { result } = run([
      { type: "session", sessionId: "ses_1", agent: "opencode", loaded: false },
      chunk("Let me look. "),
      toolCall("pending"),
      { type: "update", update: { sessionUpdate: "tool_call_update", toolCallId: "t1", status: "completed" } },
      chunk("Done: "),
      chunk("edited a.txt"),
      { type: "result", stopReason: "end_turn", usage: null },
    ]);
    expect(result.finalText).toBe("Done: edited a.txt");
    expect(result.sessionId).toBe("ses_1");
    expect(result.usage).toBeUndefined();
    expect(result.error).toBeUndefined();
  });

  test("a new message id starts a new answer; thoughts and plans end a message", () => {
    expect(run([chunk("first", "m1"), chunk("second", "m2")]).result.finalText).toBe("second");
    expect(run([chunk("a", "m1"), chunk("b", "m1")]).result.finalText).toBe("ab");
    const plan = { type: "update", update: { sessionUpdate: "plan", entries: [] } };
    expect(run([chunk("before"), plan, chunk("after")]).result.finalText).toBe("after");
  });

  test("a session id that is not a plain token is not kept (it goes back on a command line)", () => {
    for (const sessionId of ["--load=x", "a b", "", "x".repeat(201), 7]) {
      expect(run([{ type: "session", sessionId, agent: null, loaded: false }]).result.sessionId, String(sessionId)).toBeUndefined();
    }
  });

  test("the turn's tokens count cache reads and writes as input, thoughts as output; streamed as they come", () => {
    const { streamed, result } = run(
      [
        {
          type: "result",
          stopReason: "end_turn",
          usage: { inputTokens: 100, outputTokens: 20, thoughtTokens: 5, cachedReadTokens: 30, cachedWriteTokens: 10, totalTokens: 165 },
        },
      ],
      "m-1",
    );
    expect(result.usage).toEqual({ model: "m-1", inputTokens: 140, outputTokens: 25, cachedInputTokens: 30 });
    expect(streamed).toEqual([result.usage]);
  });

  test("a cost in dollars is the job's only for a new session; a continued one's includes earlier jobs'", () => {
    const cost = { type: "update", update: { sessionUpdate: "usage_update", used: 1, size: 2, cost: { amount: 0.25, currency: "USD" } } };
    expect(run([{ type: "session", sessionId: "s", agent: null, loaded: false }, cost]).result.usage).toEqual({ costUsd: 0.25 });
    expect(run([{ type: "session", sessionId: "s", agent: null, loaded: true }, cost]).result.usage).toBeUndefined();
    const euros = { type: "update", update: { sessionUpdate: "usage_update", cost: { amount: 3, currency: "EUR" } } };
    expect(run([euros]).result.usage).toBeUndefined();
  });

  test("the client's error is the job's error", () => {
    expect(run([{ type: "error", message: "the agent does not offer session/load" }]).result.error).toBe("the agent does not offer session/load");
  });

  test("hostile lines: not JSON, wrong shapes, a huge answer — no throw, a bounded answer", () => {
    const parser = acpParser(spec());
    for (const line of [
      "not json\n",
      "{}\n",
      '{"type":"update","update":7}\n',
      '{"type":"update","update":{"sessionUpdate":"agent_message_chunk","content":null}}\n',
    ]) {
      expect(() => parser.push(line, "out")).not.toThrow();
    }
    parser.push(`${JSON.stringify(chunk("y".repeat(5_000_000)))}\n`, "out");
    expect(parser.finish().finalText?.length).toBeLessThan(5_000_000);
  });
});

describe("the acp kind's Readable events", () => {
  test("answer pieces, tool calls with their results, plans, permissions, files, usage and errors", () => {
    expect(readEvent(chunk("hi"))).toEqual([{ type: "text", text: "hi", delta: true }]);
    expect(
      readEvent({
        type: "update",
        update: { sessionUpdate: "tool_call", title: "Read a.txt", kind: "read", status: "pending", rawInput: { path: "/w/a.txt" } },
      }),
    ).toEqual([{ type: "tool_call", name: "Read a.txt", args: expect.stringContaining("/w/a.txt") }]);
    // A call that arrives done shows its result too; its content's text is the detail.
    expect(
      readEvent({
        type: "update",
        update: {
          sessionUpdate: "tool_call",
          title: "ls",
          status: "completed",
          content: [{ type: "content", content: { type: "text", text: "a.txt" } }],
        },
      }),
    ).toEqual([expect.objectContaining({ type: "tool_call", name: "ls" }), { type: "tool_result", ok: true, detail: "a.txt" }]);
    expect(
      readEvent({ type: "update", update: { sessionUpdate: "tool_call_update", status: "failed", rawOutput: { error: "no such file" } } }),
    ).toEqual([{ type: "tool_result", ok: false, detail: '{"error":"no such file"}' }]);
    expect(readEvent({ type: "update", update: { sessionUpdate: "tool_call_update", status: "in_progress" } })).toEqual([]);
    expect(
      readEvent({
        type: "update",
        update: {
          sessionUpdate: "plan",
          entries: [
            { content: "read", status: "completed" },
            { content: "edit", status: "in_progress" },
            { content: "test", status: "pending" },
          ],
        },
      }),
    ).toEqual([{ type: "note", text: "plan: ✓ read · ▸ edit · ○ test" }]);
    expect(readEvent({ type: "permission", title: "Write /etc/x", kind: "edit", allowed: false, reason: "/etc/x is outside the workdir" })).toEqual([
      { type: "note", text: "permission denied: Write /etc/x (/etc/x is outside the workdir)" },
    ]);
    expect(readEvent({ type: "file", op: "write", path: "/w/a", ok: true, detail: "3 bytes" })).toEqual([
      expect.objectContaining({ type: "tool_call", name: "write_text_file" }),
      { type: "tool_result", ok: true, detail: "3 bytes" },
    ]);
    expect(readEvent({ type: "session", sessionId: "s1", agent: "opencode", loaded: true })).toEqual([
      { type: "note", text: "continued ACP session s1 with opencode" },
    ]);
    expect(readEvent({ type: "result", stopReason: "end_turn", usage: { inputTokens: 3, outputTokens: 4 } })).toEqual([
      { type: "usage", scope: "turn", usage: { extra: [], inputTokens: 3, outputTokens: 4 } },
    ]);
    expect(readEvent({ type: "result", stopReason: "end_turn", usage: null })).toEqual([]);
    // A turn that did not end on its own never reads as done.
    expect(readEvent({ type: "result", stopReason: "cancelled", usage: { inputTokens: 0, outputTokens: 0 } })).toEqual([
      { type: "note", text: "turn cancelled · 0 in / 0 out" },
    ]);
    expect(readEvent({ type: "result", stopReason: "max_tokens", usage: null })).toEqual([{ type: "note", text: "turn ended: max_tokens" }]);
    expect(readEvent({ type: "error", message: "boom" })).toEqual([{ type: "error", message: "boom" }]);
  });

  test("unknown and malformed updates read as nothing, never a throw", () => {
    for (const ev of [
      { type: "update", update: { sessionUpdate: "available_commands_update" } },
      { type: "update", update: null },
      { type: "nope" },
      { type: "update", update: { sessionUpdate: "plan", entries: "x" } },
    ]) {
      expect(() => readEvent(ev)).not.toThrow();
    }
  });
});

describe("an acp agent's sandbox", () => {
  test("may write its known program's state folders only, and none for a program Corral does not know", () => {
    expect(stateDirsOf({ kind: "acp", command: "copilot" })).toEqual([".copilot"]);
    expect(stateDirsOf({ kind: "acp", command: "/opt/bin/opencode" })).toEqual(stateDirsOf({ kind: "opencode", command: null }));
    expect(stateDirsOf({ kind: "acp", command: "/home/me/bin/my-agent" })).toEqual([]);
    expect(stateDirsOf({ kind: "acp", command: "opencode" })).not.toContain(".claude");
  });
});
