import { describe, expect, it } from "vitest";
import { excerpt } from "./long-text.js";

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n");

describe("excerpt", () => {
  it("keeps a short text whole", () => {
    expect(excerpt("one\ntwo")).toEqual({ text: "one\ntwo", lines: 2, cut: false });
    expect(excerpt("")).toEqual({ text: "", lines: 1, cut: false });
  });

  it("keeps the first lines of a long answer and the last of output still arriving", () => {
    const start = excerpt(numbered(100), "start", 3);
    expect(start).toEqual({ text: "line 1\nline 2\nline 3", lines: 100, cut: true });
    const end = excerpt(numbered(100), "end", 3);
    expect(end).toEqual({ text: "line 98\nline 99\nline 100", lines: 100, cut: true });
  });

  it("cuts an answer of one huge line, never between the halves of an emoji", () => {
    const one = "x".repeat(9) + "😀".repeat(10);
    const start = excerpt(one, "start", 24, 10);
    expect(start.cut).toBe(true);
    expect(start.text).toBe("x".repeat(9));
    const end = excerpt(`😀${"y".repeat(20)}`, "end", 24, 21);
    expect(end.text).toBe("y".repeat(20));
    expect(excerpt("z".repeat(10_000)).text.length).toBe(3000);
    // Cut inside a colour code: none of it is left to show as text.
    expect(excerpt(`${"a".repeat(8)}\u001b[31mred`, "start", 24, 11).text).toBe("a".repeat(8));
  });
});
