import { stripAnsi } from "@corral/shared";
import { describe, expect, it } from "vitest";
import { ansiSegments, markMatches, matchOffsets, paletteRgb } from "./ansi.js";

describe("ansi", () => {
  it("turns the 16 colours into theme classes and others into rgb", () => {
    const segs = ansiSegments("a\u001b[31mred\u001b[0m \u001b[1;38;5;208mpal\u001b[38;2;1;2;3mtc\u001b[0m");
    expect(segs.map((s) => s.text)).toEqual(["a", "red", " ", "pal", "tc"]);
    expect(segs[1]?.className).toBe("ansi-red-fg");
    expect(segs[3]?.style?.color).toBe(paletteRgb(208));
    expect(segs[3]?.className).toContain("ansi-bold");
    expect(segs[4]?.style?.color).toBe("rgb(1, 2, 3)");
  });

  it("strips codes for searching", () => {
    expect(stripAnsi("\u001b[32mgreen\u001b[0m text")).toBe("green text");
    expect(matchOffsets("Line line LINE", "line")).toEqual([0, 5, 10]);
  });

  it("search counts hits in the same text the segments show, so marks and counts agree", () => {
    for (const line of ["a\u001b[31mred\u001b[0m", "x\u001b[2Ky\u001b[?25lz", "\u001b[1;38;2;1;2;3mtc\u001b[m end", "no codes"]) {
      expect(stripAnsi(line), JSON.stringify(line)).toBe(
        ansiSegments(line)
          .map((s) => s.text)
          .join(""),
      );
    }
  });

  it("marks hits across colour boundaries without losing colours", () => {
    const segs = markMatches(ansiSegments("ab\u001b[31mcd\u001b[0mef"), "bcd");
    expect(segs.map((s) => [s.text, Boolean(s.match), s.className ?? ""])).toEqual([
      ["a", false, ""],
      ["b", true, ""],
      ["cd", true, "ansi-red-fg"],
      ["ef", false, ""],
    ]);
  });
});
