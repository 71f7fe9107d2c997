import { describe, expect, test } from "vitest";
import type { TurnMessage } from "../types.js";
import { fitHistory } from "./history.js";

const msg = (role: TurnMessage["role"], content: string, toolCalls: TurnMessage["toolCalls"] = null): TurnMessage => ({
  role,
  content,
  toolCalls,
  toolName: role === "tool" ? "read_file" : null,
});

/** A turn that read a file of `fileChars` characters before answering. */
const turn = (prompt: string, fileChars: number, answer: string): TurnMessage[] => [
  msg("user", prompt),
  msg("assistant", "", [{ function: { name: "read_file", arguments: { path: "a.txt" } } }]),
  msg("tool", "x".repeat(fileChars)),
  msg("assistant", answer),
];

describe("the earlier turns a follow-up sends", () => {
  test("every turn whole when they fit in half of num_ctx (2 characters per token)", () => {
    const fitted = fitHistory([turn("one", 100, "a1"), turn("two", 100, "a2")], 1000);
    expect(fitted).toMatchObject({ whole: 2, compacted: 0, left: 0 });
    expect(fitted.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant"]);
    expect(fitted.messages[1]?.tool_calls).toEqual([{ function: { name: "read_file", arguments: { path: "a.txt" } } }]);
    expect(fitted.messages[2]?.tool_name).toBe("read_file");
  });

  test("a turn too big to send whole is cut to its prompt and answer; the newest turns are kept first", () => {
    const fitted = fitHistory([turn("old", 100, "a-old"), turn("big", 5000, "a-big"), turn("new", 100, "a-new")], 1000);
    expect(fitted).toMatchObject({ whole: 2, compacted: 1, left: 0 });
    expect(fitted.messages.map((m) => m.content)).toContain("a-big");
    expect(fitted.messages.some((m) => m.content.length === 5000)).toBe(false);
  });

  test("once a turn does not fit even cut, it and every older turn are left out: what is sent has no gap", () => {
    const fitted = fitHistory([turn("oldest", 10, "a0"), turn("p".repeat(3000), 10, "a1"), turn("new", 10, "a2")], 1000);
    expect(fitted).toMatchObject({ whole: 1, compacted: 0, left: 2 });
    expect(fitted.messages[0]?.content).toBe("new");
  });
});
