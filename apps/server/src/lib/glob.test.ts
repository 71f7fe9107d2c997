import { expect, test } from "vitest";
import { globMatcher } from "./glob.js";

test("*, **, ?, {a,b} over workdir-relative paths", () => {
  const cases: [string, string, boolean][] = [
    ["*.ts", "a.ts", true],
    ["*.ts", "src/a.ts", false],
    ["**/*.ts", "a.ts", true],
    ["**/*.ts", "src/deep/a.ts", true],
    ["src/**/*.ts", "src/a.ts", true],
    ["src/**/*.ts", "src/x/y/a.ts", true],
    ["src/**/*.ts", "lib/a.ts", false],
    ["src/**", "src/x/y", true],
    ["a?c", "abc", true],
    ["a?c", "a/c", false],
    ["*.{md,txt}", "notes.txt", true],
    ["*.{md,txt}", "notes.md", true],
    ["*.{md,txt}", "notes.ts", false],
    ["{,x}y", "y", true],
    ["{,x}y", "xy", true],
    ["{a", "{a", true],
    ["a.b", "axb", false],
    ["[ab]", "[ab]", true],
    ["(x)+", "(x)+", true],
    ["**", "", true],
    ["x", "", false],
  ];
  for (const [glob, path, expected] of cases) expect(globMatcher(glob)(path), `${glob} ~ ${path}`).toBe(expected);
});

test("stacked ** over a long path answers at once (linear time, no backtracking)", () => {
  const deep = `${"d/".repeat(2000)}file.txt`;
  expect(globMatcher(`${"**/".repeat(12)}x`)(deep)).toBe(false);
  expect(globMatcher(`${"**/".repeat(12)}file.txt`)(deep)).toBe(true);
  expect(globMatcher(`${"*".repeat(40)}!`)("a".repeat(5000))).toBe(false);
});

test("a glob too long to be a path is refused", () => {
  expect(() => globMatcher("*".repeat(1001))).toThrow(/longer than 1000 characters/);
});
