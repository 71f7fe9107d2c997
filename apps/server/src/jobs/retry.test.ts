import { retryBackoffMs } from "@corral/shared";
import { expect, test } from "vitest";
import { DEFAULT_RETRY_POLICY } from "../agents/retry-defaults.js";
import { matcherThreads } from "../lib/pattern-worker.js";
import { RETRY_PATTERN_DEADLINE_MS, retryReason } from "./retry.js";

const policy = { maxAttempts: 3, exitCodes: [75], outputPatterns: ["rate.?limit"], backoffS: 2 };

test("a listed exit code or a matching output is transient", async () => {
  expect(await retryReason(policy, 1, 75, "")).toBe("exit code 75");
  expect(await retryReason(policy, 1, 1, "Error: Rate Limit reached")).toBe("output matched /rate.?limit/");
  expect(await retryReason(policy, 1, 1, "syntax error")).toBeNull();
});

test("no retry past maxAttempts, or without a policy", async () => {
  expect(await retryReason(policy, 3, 75, "")).toBeNull();
  expect(await retryReason(null, 1, 75, "rate limit")).toBeNull();
});

test("the backoff doubles from the second attempt on", () => {
  expect([2, 3, 4].map((n) => retryBackoffMs(policy, n))).toEqual([2000, 4000, 8000]);
});

test("the default policy recognises the CLIs' quota and overload messages", async () => {
  for (const text of ["429 Too Many Requests", "RESOURCE_EXHAUSTED: quota exceeded", "API Error: 529 Overloaded", "503 Service Unavailable"]) {
    expect(await retryReason(DEFAULT_RETRY_POLICY, 1, 1, text), text).not.toBeNull();
  }
});

test(
  "a pattern that backtracks for hours counts as not matching once its deadline passes, and never holds the event loop",
  async () => {
    const evil = { ...policy, outputPatterns: ["^(a+)+$", "overloaded"] };
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    try {
      const { timedOut } = matcherThreads();
      expect(await retryReason(evil, 1, 1, `${"a".repeat(40)}!`)).toBeNull();
      expect(matcherThreads().timedOut).toBe(timedOut + 1);
      expect(ticks).toBeGreaterThan(0);
      // The next pattern still runs.
      expect(await retryReason(evil, 1, 1, "Overloaded")).toBe("output matched /overloaded/");
    } finally {
      clearInterval(ticker);
    }
  },
  10 * RETRY_PATTERN_DEADLINE_MS,
);

test("a pattern too long to match counts as not matching; the next pattern still runs", async () => {
  const long = { ...policy, outputPatterns: ["x".repeat(20_000), "overloaded"] };
  expect(await retryReason(long, 1, 1, "Overloaded")).toBe("output matched /overloaded/");
});
