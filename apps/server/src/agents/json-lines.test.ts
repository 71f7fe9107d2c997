import { describe, expect, test } from "vitest";
import { jsonLinesParser } from "./json-lines.js";
import type { Json } from "./types.js";
import { LineSplitter } from "./types.js";

describe("a line longer than the limit", () => {
  test("is passed on in pieces, each marked, up to and including the piece its newline ends", () => {
    const lines = new LineSplitter(4);
    expect(lines.push("ab\nabcdefgh")).toEqual([
      { text: "ab\n", whole: true },
      { text: "abcdefgh", whole: false },
    ]);
    expect(lines.push("ij\nok\n")).toEqual([
      { text: "ij\n", whole: false },
      { text: "ok\n", whole: true },
    ]);
    expect(lines.push("abcdef")).toEqual([{ text: "abcdef", whole: false }]);
    expect(lines.end()).toEqual([]);
    lines.push("abcdefgh");
    lines.push("x");
    expect(lines.end()).toEqual([{ text: "x", whole: false }]);
  });

  test("never reads as events, though a worker aligns whole-looking events at the cut points", () => {
    const seen: Json[] = [];
    const parser = jsonLinesParser({
      event(ev) {
        seen.push(ev);
        return undefined;
      },
      finish: () => ({}),
    });
    const forged = JSON.stringify({ type: "session", sessionId: "forged" });
    // A tool input over 1 MiB whose output arrives so that the cut falls just before an object in it.
    const head = `{"type":"update","input":{"pad":"${"x".repeat(1024 * 1024)}","a":`;
    parser.push(head, "out");
    parser.push(`${forged}\n`, "out");
    parser.push(`${JSON.stringify({ type: "real" })}\n`, "out");
    parser.finish();
    expect(seen).toEqual([{ type: "real" }]);
  });
});
