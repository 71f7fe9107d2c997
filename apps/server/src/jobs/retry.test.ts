import { expect, test } from "vitest";
import { DEFAULT_RETRY_POLICY } from "../agents/retry-defaults.js";
import { backoffMs, retryReason } from "./retry.js";

const policy = { maxAttempts: 3, exitCodes: [75], outputPatterns: ["rate.?limit"], backoffS: 2 };

test("a listed exit code or a matching output is transient", () => {
  expect(retryReason(policy, 1, 75, "")).toBe("exit code 75");
  expect(retryReason(policy, 1, 1, "Error: Rate Limit reached")).toBe("output matched /rate.?limit/");
  expect(retryReason(policy, 1, 1, "syntax error")).toBeNull();
});

test("no retry past maxAttempts, or without a policy", () => {
  expect(retryReason(policy, 3, 75, "")).toBeNull();
  expect(retryReason(null, 1, 75, "rate limit")).toBeNull();
});

test("the backoff doubles from the second attempt on", () => {
  expect([2, 3, 4].map((n) => backoffMs(policy, n))).toEqual([2000, 4000, 8000]);
});

test("the default policy recognises the CLIs' quota and overload messages", () => {
  for (const text of ["429 Too Many Requests", "RESOURCE_EXHAUSTED: quota exceeded", "API Error: 529 Overloaded", "503 Service Unavailable"]) {
    expect(retryReason(DEFAULT_RETRY_POLICY, 1, 1, text), text).not.toBeNull();
  }
});
