import { expect, test } from "vitest";
import { FailedAuthLimiter } from "./rate-limit.js";

test("blocks an address after the limit, for the window, and only that address", () => {
  let now = 1_000_000;
  const limiter = new FailedAuthLimiter(3, 60_000, () => now);
  for (let i = 0; i < 2; i++) limiter.recordFailure("10.0.0.1");
  expect(limiter.retryAfterS("10.0.0.1")).toBe(0);
  limiter.recordFailure("10.0.0.1");
  expect(limiter.retryAfterS("10.0.0.1")).toBe(60);
  expect(limiter.retryAfterS("10.0.0.2")).toBe(0);
  now += 30_500;
  expect(limiter.retryAfterS("10.0.0.1")).toBe(30);
  now += 30_000;
  expect(limiter.retryAfterS("10.0.0.1")).toBe(0);
  // A fresh window: one failure does not block again.
  limiter.recordFailure("10.0.0.1");
  expect(limiter.retryAfterS("10.0.0.1")).toBe(0);
});

test("failures spread wider than the window never block", () => {
  let now = 0;
  const limiter = new FailedAuthLimiter(3, 1000, () => now);
  for (let i = 0; i < 20; i++) {
    limiter.recordFailure("a");
    now += 600;
    if (i % 2 === 1) expect(limiter.retryAfterS("a")).toBe(0);
  }
});

test("memory stays bounded with endless new addresses", () => {
  let now = 0;
  const limiter = new FailedAuthLimiter(5, 60_000, () => now);
  for (let i = 0; i < 25_000; i++) {
    limiter.recordFailure(`addr-${i}`);
    now += 1;
  }
  expect(limiter.tracked).toBeLessThanOrEqual(10_000);
  expect(limiter.failuresTotal).toBe(25_000);
});
