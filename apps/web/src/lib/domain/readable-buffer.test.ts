import { READABLE_MAX_TEXT, stripAnsi, type ReadableEvent } from "@corral/shared";
import { describe, expect, it } from "vitest";
import { appendReadable, emptyReadable } from "./readable-buffer.js";

const delta = (text: string): ReadableEvent => ({ type: "text", text, delta: true });
const shown = (events: ReadableEvent[][]) => {
  let buffer = emptyReadable();
  events.forEach((page, i) => {
    buffer = appendReadable(buffer, page, i, i + 1, false);
  });
  return buffer.lines.map((l) => stripAnsi(l.text));
};

describe("the Readable view's buffer", () => {
  it("joins an answer's pieces across pages into one line, keeping the spaces between them", () => {
    expect(
      shown([[{ type: "session" }, delta("Done: ")], [delta("wrote "), delta("it\n")], [{ type: "tool_call", name: "Bash", args: "ls" }]]),
    ).toEqual(["· session started", "Done: wrote it", "→ Bash ls"]);
  });

  it("bounds a streamed answer however many pieces it has", () => {
    const lines = shown([Array.from({ length: 500 }, () => delta("y".repeat(100)))]);
    expect(lines).toHaveLength(1);
    expect(lines[0]?.length).toBe(READABLE_MAX_TEXT);
  });

  it("ignores a page read from an older cursor, so no line appears twice", () => {
    const once = appendReadable(emptyReadable(), [{ type: "note", text: "x" }], 0, 10, false);
    expect(appendReadable(once, [{ type: "note", text: "x" }], 0, 10, false)).toBe(once);
  });

  it("colours tool results by outcome and leaves output lines as printed", () => {
    const buffer = appendReadable(
      emptyReadable(),
      [
        { type: "tool_result", ok: false, detail: "denied" },
        { type: "output", stream: "err", text: "warn" },
      ],
      0,
      5,
      true,
    );
    expect(buffer.lines).toEqual([
      { stream: "out", text: "\u001b[31m← error: denied\u001b[0m" },
      { stream: "err", text: "warn" },
    ]);
  });
});
