import type { FileRead } from "@corral/shared";
import { describe, expect, it } from "vitest";
import { joinParts, nextPartOffset } from "./file-parts.js";

const part = (offset: number, text: string, size: number, more: Partial<FileRead> = {}): FileRead => ({
  path: "/w/big.log",
  size,
  mtime: 1,
  binary: false,
  offset,
  length: Buffer.byteLength(text),
  text,
  ...more,
});

describe("reading a file a part at a time", () => {
  it("goes on from where the last part ended, until the end", () => {
    expect(nextPartOffset(part(0, "héllo", 20))).toBe(6);
    expect(nextPartOffset(part(6, "world", 20))).toBe(11);
    expect(nextPartOffset(part(11, "123456789", 20))).toBeNull();
  });

  it("stops for a binary file, and for a part that moved nothing on (the file shrank)", () => {
    expect(nextPartOffset(part(0, "", 900, { binary: true, text: null, length: 0 }))).toBeNull();
    expect(nextPartOffset(part(40, "", 90))).toBeNull();
  });

  it("joins the parts and says how much is shown and left", () => {
    const joined = joinParts([part(0, "héllo ", 20), part(7, "wörld", 20)]);
    expect(joined).toEqual({ text: "héllo wörld", shown: 13, size: 20, left: 7 });
    expect(joinParts([])).toEqual({ text: "", shown: 0, size: 0, left: 0 });
  });
});
