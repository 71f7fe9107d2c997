// Many greps at once (several jobs, a model's parallel tool calls) with patterns that backtrack
// for their whole deadline: the pattern threads they start are bounded, the rest wait their turn,
// and a cancel frees a waiting one as well as a running one.
import { expect, test } from "vitest";
import { LineMatcher, matcherThreads } from "../src/lib/pattern-worker.js";

const until = async (what: () => boolean) => {
  while (!what()) await new Promise((r) => setTimeout(r, 20));
};

test("12 catastrophic matchers at once run on at most 4 threads; aborting them all frees every thread", async () => {
  const controllers = Array.from({ length: 12 }, () => new AbortController());
  const matchers = controllers.map((c) => new LineMatcher("^(a+)+$", { deadlineMs: 60_000, signal: c.signal }));
  const runs = matchers.map((m) => m.matchLines(`${"a".repeat(40)}!`, 1).finally(() => m.close()));
  const settled = Promise.allSettled(runs);
  await until(() => matcherThreads().busy >= 4);
  await new Promise((r) => setTimeout(r, 300));
  const during = matcherThreads();
  expect(during.busy + during.idle).toBeLessThanOrEqual(4);
  expect(during.waiting).toBe(8);
  for (const c of controllers) c.abort(new Error("cancelled by test"));
  const results = await settled;
  expect(results.every((r) => r.status === "rejected" && /cancelled by test/.test(String(r.reason)))).toBe(true);
  await until(() => matcherThreads().busy === 0);
  expect(matcherThreads()).toMatchObject({ busy: 0, waiting: 0 });
});

test("a matcher waiting for a thread gets one when a thread stopped at its deadline has exited", async () => {
  const hogs = Array.from({ length: 4 }, () => {
    const m = new LineMatcher("^(a+)+$", { deadlineMs: 1500 });
    return m.matchLines(`${"a".repeat(40)}!`, 1).finally(() => m.close());
  });
  const hogsSettled = Promise.allSettled(hogs);
  const quick = new LineMatcher("needle", { deadlineMs: 60_000 });
  try {
    expect(await quick.matchLines("hay\nneedle\nhay", 5)).toEqual([1]);
  } finally {
    quick.close();
  }
  // Another quick one after it reuses the thread it handed back.
  const again = new LineMatcher("hay", { deadlineMs: 60_000 });
  try {
    expect(await again.matchLines("hay\nneedle\nhay", 5)).toEqual([0, 2]);
  } finally {
    again.close();
  }
  expect((await hogsSettled).every((r) => r.status === "rejected" && /longer than 1.5 s/.test(String(r.reason)))).toBe(true);
  await until(() => matcherThreads().busy === 0);
  expect(matcherThreads().waiting).toBe(0);
});

test("a pattern of 10 MB is refused before any thread is used", () => {
  const before = matcherThreads();
  expect(() => new LineMatcher("a".repeat(10 * 1024 * 1024), { deadlineMs: 1000 })).toThrow(/longer than 10000 characters/);
  expect(matcherThreads()).toEqual(before);
});
