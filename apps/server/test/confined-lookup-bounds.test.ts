// A worker's tree and a model's paths cannot make one lookup open directories without end (each
// a synchronous call on the event loop), and no walk leaves a descriptor open, however it ends.
import { mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, test } from "vitest";
import { globFiles, grepFiles } from "../src/agents/tools/search.js";
import { snapshotDir } from "../src/jobs/file-watcher.js";
import { Refusal, withWorkdir, writeConfined } from "../src/lib/confined-files.js";
import { tempDir } from "./helpers.js";

let wd: string;
beforeEach(() => {
  wd = tempDir("corral-lookup-bounds-");
});
afterEach(() => rmSync(wd, { recursive: true, force: true }));

test("write_file of a path 5000 directories deep is refused, not created one mkdir at a time", async () => {
  await expect(writeConfined(wd, `${"d/".repeat(5000)}f.txt`, "x")).rejects.toThrow(/too deep/);
  expect(readdirSync(wd)).toEqual([]);
});

test("a path longer than 64 KiB is refused at once (40 000 components, 80 KB)", async () => {
  await expect(writeConfined(wd, "a/".repeat(40_000), "x")).rejects.toThrow(/longer than/);
});

test("`..` in a link's target re-walked from the root is bounded: a link that would take 80 000 opens is refused", () => {
  // 100 levels deep, a link whose target goes into `s` and back 800 times: each `..` re-walks the
  // 100 levels from the root.
  const deep = path.join(wd, ...Array.from({ length: 100 }, () => "d"));
  mkdirSync(path.join(deep, "s"), { recursive: true });
  writeFileSync(path.join(deep, "f.txt"), "hello\n");
  symlinkSync(`${"s/../".repeat(800)}f.txt`, path.join(deep, "l"));
  const rel = path.relative(wd, path.join(deep, "l"));
  expect(() =>
    withWorkdir(wd, (w) => {
      w.openFile(rel);
    }),
  ).toThrow(Refusal);
  // A link with a few `..` still works.
  symlinkSync("s/../f.txt", path.join(deep, "ok"));
  withWorkdir(wd, (w) => {
    const { rel: found } = w.openFile(path.relative(wd, path.join(deep, "ok")));
    expect(found).toBe(path.relative(wd, path.join(deep, "f.txt")));
  });
});

const openFds = () => readdirSync("/proc/self/fd").length;

test("no descriptor is left open by walks that end early: MAX_MATCHES, a refused path, a pattern past its deadline", async () => {
  for (let i = 0; i < 30; i++) {
    mkdirSync(path.join(wd, `d${i}`, "e"), { recursive: true });
    for (let j = 0; j < 10; j++) writeFileSync(path.join(wd, `d${i}`, "e", `f${j}.txt`), `${"a".repeat(26)}!\nmatch\n`);
  }
  symlinkSync("/etc", path.join(wd, "out"));
  // Once, so lazily opened descriptors (an idle pattern thread's, vitest's) are there before counting.
  await grepFiles(wd, "match");
  const before = openFds();
  // The idle thread is stopped at the deadline (its descriptors go with it); the next grep starts another.
  await expect(grepFiles(wd, "^(a+)+$", { deadlineMs: 300 })).rejects.toThrow(/longer than/);
  await grepFiles(wd, "match");
  expect(await globFiles(wd, "**/*.txt")).toMatch(/more than 200 files/);
  expect(await grepFiles(wd, "match")).toMatch(/more than 200 matching lines/);
  await expect(grepFiles(wd, "x", { under: "out/passwd" })).rejects.toThrow(/outside/);
  await expect(grepFiles(wd, "x", { under: "d1/e/f1.txt/../../../../.." })).rejects.toThrow(/outside/);
  await expect(grepFiles(wd, "x", { under: "d1/e/nothing/here" })).rejects.toThrow(/ENOENT/);
  expect(openFds()).toBe(before);
});

test("the workdir snapshot stops at twice its file limit in entries: empty directories without end are not walked to the end", async () => {
  for (let i = 0; i < 50; i++) mkdirSync(path.join(wd, `empty-${i}`));
  const many = await snapshotDir(wd, [], 10);
  expect(many).toMatchObject({ complete: false });
  expect(many.files.size).toBe(0);
  rmSync(wd, { recursive: true });
  mkdirSync(path.join(wd, "a", "b"), { recursive: true });
  for (const f of ["x", "a/y", "a/b/z"]) writeFileSync(path.join(wd, f), f);
  const small = await snapshotDir(wd, [], 10);
  expect(small.complete).toBe(true);
  expect([...small.files.keys()].sort()).toEqual(["a/b/z", "a/y", "x"]);
});
