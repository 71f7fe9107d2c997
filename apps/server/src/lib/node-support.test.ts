import { describe, expect, it } from "vitest";
import { nodeSupportNote } from "./node-support.js";

describe("the start-up line about Node.js", () => {
  it("is said on Node 20, past its end of life, naming the lines to move to", () => {
    expect(nodeSupportNote("20.20.2")).toBe(
      "Node.js 20.20.2 is past its end of life (2026-04-30) and gets no security fixes; Corral runs on it, but move to Node.js 22 or 24",
    );
  });
  it("is not said on the supported lines or newer", () => {
    for (const version of ["22.12.0", "24.1.0", "26.0.0"]) expect(nodeSupportNote(version)).toBeNull();
  });
});
