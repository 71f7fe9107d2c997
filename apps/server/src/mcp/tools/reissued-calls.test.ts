import { describe, expect, test } from "vitest";
import { REISSUE_WINDOW_MS, ReissuedCalls } from "./reissued-calls.js";

describe("ReissuedCalls", () => {
  test("a lost call's job is taken once by the same call, whatever its keys' order", () => {
    const calls = new ReissuedCalls();
    const key = ReissuedCalls.keyOf("gemini_run", { prompt: "p", workdir: "/w", retry: { on: ["x"], max: 2 } }, "session s1");
    calls.lost(key, "job1", 1000);
    expect(calls.take(ReissuedCalls.keyOf("gemini_run", { workdir: "/w", retry: { max: 2, on: ["x"] }, prompt: "p" }, "session s1"), 2000)).toBe(
      "job1",
    );
    expect(calls.take(key, 2000)).toBeUndefined();
  });

  test("another tool, other arguments, another caller, or a call after the window launch anew", () => {
    const calls = new ReissuedCalls();
    const key = ReissuedCalls.keyOf("gemini_run", { prompt: "p" }, "session s1");
    calls.lost(key, "job1", 0);
    expect(calls.take(ReissuedCalls.keyOf("gemini_run_async", { prompt: "p" }, "session s1"), 1)).toBeUndefined();
    expect(calls.take(ReissuedCalls.keyOf("gemini_run", { prompt: "q" }, "session s1"), 1)).toBeUndefined();
    expect(calls.take(ReissuedCalls.keyOf("gemini_run", { prompt: "p" }, "session s2"), 1)).toBeUndefined();
    expect(calls.take(key, REISSUE_WINDOW_MS + 1)).toBeUndefined();
  });
});
