import { afterEach, expect, test } from "vitest";
import { until } from "../../test/helpers.js";
import { Refusal } from "./confined-files.js";
import { LineMatcher, matcherThreads } from "./pattern-worker.js";

const CATASTROPHIC = "^(a+)+$";
/** Hours of backtracking for V8's engine. */
const EVIL_LINE = `${"a".repeat(40)}!`;

const open: LineMatcher[] = [];
afterEach(() => {
  for (const m of open.splice(0)) m.close();
});
const matcher = (source: string, deadlineMs: number, signal?: AbortSignal) => {
  const m = new LineMatcher(source, { deadlineMs, signal });
  open.push(m);
  return m;
};

test("answers the matching lines' indices, a bounded number of them", async () => {
  const m = matcher("b", 60_000);
  expect(await m.matchLines("abc\nxyz\nbb\n", 10)).toEqual([0, 2]);
  expect(await m.matchLines("b\nb\nb\nb", 2)).toEqual([0, 1]);
});

test("a pattern that backtracks forever is stopped at its deadline with a clear error, and the event loop runs meanwhile", async () => {
  const m = matcher(CATASTROPHIC, 1500);
  let ticks = 0;
  const ticker = setInterval(() => ticks++, 10);
  try {
    const failure = await m.matchLines(EVIL_LINE, 10).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(Refusal);
    expect((failure as Error).message).toMatch(/^the pattern took longer than 1\.5 s to match; simplify it/);
    // Timers fired while it ran: the matching never held the event loop.
    expect(ticks).toBeGreaterThan(0);
  } finally {
    clearInterval(ticker);
  }
  await expect(m.matchLines("a", 10)).rejects.toThrow(/took longer/);
  // The thread was terminated, not kept for the next search.
  await until(() => matcherThreads().busy === 0 || undefined, 10_000, "the stopped worker to exit");
});

test("an abort stops a match under way and its thread", async () => {
  const controller = new AbortController();
  const m = matcher(CATASTROPHIC, 600_000, controller.signal);
  const pending = m.matchLines(EVIL_LINE, 10);
  await until(() => matcherThreads().busy === 1 || undefined, 10_000, "the worker to start");
  controller.abort(new Error("job cancelled"));
  await expect(pending).rejects.toThrow("job cancelled");
  await until(() => matcherThreads().busy === 0 || undefined, 10_000, "the aborted worker to exit");
});

test("an invalid pattern is refused before any thread starts, naming the problem", () => {
  expect(() => new LineMatcher("(", { deadlineMs: 1000 })).toThrow(/^pattern is not a valid regular expression: /);
});
