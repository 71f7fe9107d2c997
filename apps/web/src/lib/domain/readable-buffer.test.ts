import { READABLE_MAX_TEXT, stripAnsi, type ReadableEvent } from "@corral/shared";
import { describe, expect, it } from "vitest";
import { appendReadable, emptyReadable, shownText } from "./readable-buffer.js";

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

  it("shows a streamed answer as lines that grow as its pieces arrive, every line to the last", () => {
    let buffer = emptyReadable();
    const seen: string[][] = [];
    for (let i = 1; i <= 300; i++) {
      // Pieces cut anywhere: a line ends in the middle of one piece, the next starts there.
      buffer = appendReadable(buffer, [delta(`tick ${i}`), delta(i % 2 ? " …\n" : "\r\n")], i - 1, i, false);
      seen.push(buffer.lines.map((l) => l.text));
    }
    expect(seen[0]).toEqual(["tick 1 …"]);
    expect(seen[1]).toEqual(["tick 1 …", "tick 2"]);
    expect(buffer.lines).toHaveLength(300);
    expect(buffer.lines.at(-1)?.text).toBe("tick 300");
    buffer = appendReadable(buffer, [delta("the last"), delta(" line, still growing")], 300, 301, false);
    expect(buffer.lines.at(-1)?.text).toBe("the last line, still growing");
    expect(buffer.answer).toBe("the last line, still growing");
  });

  it("keeps every character of a long answer, in lines of bounded length, whether streamed or whole", () => {
    // The emoji falls across a row boundary and across two pieces: it stays one character.
    const long = `${"y".repeat(3999)}😀${"z".repeat(1000)}`;
    const streamed = shown([Array.from({ length: 50 }, (_, i) => delta(long.slice(i * 100, i * 100 + 100))), [delta(long.slice(5000))]]);
    const whole = shown([[{ type: "text", text: `${long}\nsecond line` }]]);
    expect(streamed.join("")).toBe(long);
    expect(whole).toEqual([...streamed, "second line"]);
    expect(streamed.map((l) => l.length)).toEqual([READABLE_MAX_TEXT, READABLE_MAX_TEXT - 1, 1002]);
  });

  it("ignores a page read from an older cursor, so no line appears twice", () => {
    const once = appendReadable(emptyReadable(), [{ type: "note", text: "x" }], 0, 10, false);
    expect(appendReadable(once, [{ type: "note", text: "x" }], 0, 10, false)).toBe(once);
  });

  it("shows a worker's text without its escape sequences: only the view colours lines, by what they are", () => {
    const forged = "\u001b[2m· permission allowed: rm -rf ~ (inside the workdir)\u001b[0m";
    const buffer = appendReadable(
      emptyReadable(),
      [delta(`${forged}\n`), { type: "tool_call", name: forged, args: "" }, { type: "output", stream: "out", text: `\u001b]0;title\u0007${forged}` }],
      0,
      1,
      true,
    );
    expect(buffer.lines[0]).toEqual({ stream: "out", text: "· permission allowed: rm -rf ~ (inside the workdir)" });
    expect(buffer.lines[1]?.text).toBe("\u001b[36m→ · permission allowed: rm -rf ~ (inside the workdir)\u001b[0m");
    expect(buffer.lines[2]?.text).not.toContain("\u001b");
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

describe("a job's output as text (Compare's columns)", () => {
  it("reads as the Readable view's lines, never the worker's JSON, without trailing blank lines", () => {
    const buffer = appendReadable(
      emptyReadable(),
      [
        { type: "session", model: "m" },
        { type: "text", text: "done\n\n" },
      ],
      0,
      1,
      true,
    );
    expect(stripAnsi(shownText(buffer))).toBe("· session started · m\ndone");
    expect(shownText(undefined)).toBe("");
  });
});
