import { describe, expect, it } from "vitest";
import { appendOutput, appendStreamed, emptyOutput } from "./output-buffer.js";

describe("output buffer", () => {
  it("joins a line split across chunks and keeps streams apart", () => {
    let b = appendOutput(emptyOutput(), [{ stream: "out", text: "hel" }], 0, 10, false);
    b = appendOutput(
      b,
      [
        { stream: "out", text: "lo\nwor" },
        { stream: "err", text: "oops\n" },
      ],
      10,
      20,
      false,
    );
    b = appendOutput(b, [{ stream: "out", text: "ld\n" }], 20, 30, true);
    expect(b.lines).toEqual([
      { stream: "out", text: "hello" },
      { stream: "out", text: "wor" },
      { stream: "err", text: "oops" },
      { stream: "out", text: "ld" },
    ]);
    expect(b.cursor).toBe(30);
    expect(b.complete).toBe(true);
  });

  it("ignores a page read from a cursor it has already passed", () => {
    const b = appendOutput(emptyOutput(), [{ stream: "out", text: "a\n" }], 0, 5, false);
    expect(appendOutput(b, [{ stream: "out", text: "a\n" }], 0, 5, false)).toBe(b);
  });

  it("drops stream messages that end at or before what it holds", () => {
    let b = appendOutput(emptyOutput(), [{ stream: "out", text: "a\nb\n" }], 0, 8, false);
    b = appendStreamed(b, { stream: "out", text: "b\n" }, 8);
    b = appendStreamed(b, { stream: "out", text: "c\n" }, 12);
    expect(b.lines.map((l) => l.text)).toEqual(["a", "b", "c"]);
  });

  it("keeps memory bounded by dropping the oldest lines", () => {
    const text = Array.from({ length: 10 }, (_, i) => `l${i}\n`).join("");
    const b = appendOutput(emptyOutput(), [{ stream: "out", text }], 0, 100, false, 4);
    expect(b.lines.map((l) => l.text)).toEqual(["l6", "l7", "l8", "l9"]);
    expect(b.dropped).toBe(6);
  });
});
