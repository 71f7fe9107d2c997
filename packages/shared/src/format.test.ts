import { expect, test } from "vitest";
import { costText, formatBytes, formatUsd, localDay, plural, stripAnsi, totalCostText } from "./format.js";

test("formatUsd: cents from $1, two significant digits below, $0 for nothing and never $0.0000", () => {
  expect([0, 0.00004, 0.0001, 0.001, 0.0042, 0.01, 0.0129, 0.0134, 0.02, 0.5, 0.996, 1, 1.5, 12.345, -0.25].map(formatUsd)).toEqual([
    "$0",
    "<$0.0001",
    "$0.00010",
    "$0.0010",
    "$0.0042",
    "$0.010",
    "$0.013",
    "$0.013",
    "$0.020",
    "$0.50",
    "$1.00",
    "$1.00",
    "$1.50",
    "$12.35",
    "-$0.25",
  ]);
});

test("localDay is the local calendar day, from ms or a Date", () => {
  expect(localDay(new Date(2026, 0, 5, 23, 59))).toBe("2026-01-05");
  expect(localDay(new Date(2026, 10, 29).getTime())).toBe("2026-11-29");
});

test("stripAnsi removes colour, cursor and erase sequences and leaves the text", () => {
  expect(stripAnsi("\u001b[1m\u001b[32m1.18.33\u001b[0m")).toBe("1.18.33");
  expect(stripAnsi("a\u001b[2Kb\u001b[?25lc\u001b[38;2;1;2;3md\u001b[m")).toBe("abcd");
  expect(stripAnsi("plain [not a code]")).toBe("plain [not a code]");
});

test("formatBytes counts in binary units up to GB", () => {
  expect([0, 1023, 1536, 5 * 1024 * 1024, 3 * 1024 ** 3].map(formatBytes)).toEqual(["0 B", "1023 B", "1.5 KB", "5.0 MB", "3.0 GB"]);
});

test("plural names one of a thing in the singular and every other count in the plural", () => {
  expect([0, 1, 2, 1234].map((n) => plural(n, "line"))).toEqual(["0 lines", "1 line", "2 lines", "1,234 lines"]);
  expect([1, 3].map((n) => plural(n, "entry", "entries"))).toEqual(["1 entry", "3 entries"]);
});

test("costText: one set of words for a cost; $0 for tokens a worker used is no price, not free", () => {
  expect(costText(0.0039, { tokens: 1240, source: "reported" })).toBe("$0.0039");
  expect(costText(0, { tokens: 1240, source: "reported" })).toBe("unpriced");
  expect(costText(0, { tokens: 1240 })).toBe("unpriced");
  expect(costText(0, { tokens: 1240, source: "estimated" })).toBe("$0");
  expect(costText(0, { tokens: 0, source: "reported" })).toBe("$0");
  expect(costText(null, { tokens: 10 })).toBe("unpriced");
  expect(costText(undefined)).toBe("—");
  expect(costText(null, {}, "no usage")).toBe("no usage");
  expect(costText(Number.NaN, { tokens: 3 })).toBe("unpriced");
  expect(costText(-0.25, { tokens: 3, source: "reported" })).toBe("unpriced");
  expect(costText(Number.POSITIVE_INFINITY)).toBe("—");
});

test("totalCostText: nothing ran, no usage, unpriced, partly priced, priced", () => {
  expect(totalCostText({ jobs: 0, costUsd: null, unpricedJobs: 0 })).toBe("nothing ran");
  expect(totalCostText({ jobs: 2, costUsd: null, unpricedJobs: 0 })).toBe("no usage");
  expect(totalCostText({ jobs: 2, costUsd: null, unpricedJobs: 2 })).toBe("unpriced");
  expect(totalCostText({ jobs: 3, costUsd: 1.2, unpricedJobs: 2 })).toBe("$1.20 + 2 unpriced");
  expect(totalCostText({ jobs: 3, costUsd: 1.2, unpricedJobs: 2 }, true)).toBe("$1.20");
  expect(totalCostText({ jobs: 3, costUsd: 0.013, unpricedJobs: 0 })).toBe("$0.013");
});
