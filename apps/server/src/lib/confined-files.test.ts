import { execFileSync } from "node:child_process";
import { linkSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { tempDir } from "../../test/helpers.js";
import { Refusal, writeAnswerFile, writeConfined } from "./confined-files.js";

let root: string;
let wd: string;
let outside: string;
beforeEach(() => {
  root = tempDir("corral-confined-");
  wd = path.join(root, "w");
  outside = path.join(root, "outside");
  mkdirSync(wd);
  mkdirSync(outside);
  writeFileSync(path.join(outside, "victim.txt"), "precious");
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const victim = () => readFileSync(path.join(outside, "victim.txt"), "utf8");

describe("writeConfined: nothing a worker put in the workdir leads a write out of it", () => {
  test("writes and overwrites a regular file", async () => {
    writeFileSync(path.join(wd, "output.md"), "an older and longer answer");
    expect(await writeConfined(wd, "output.md", "new")).toBe("output.md");
    expect(readFileSync(path.join(wd, "output.md"), "utf8")).toBe("new");
  });

  test("a symlink out, in the file's place, is refused, and its target keeps its content", async () => {
    symlinkSync(path.join(outside, "victim.txt"), path.join(wd, "output.md"));
    await expect(writeConfined(wd, "output.md", "pwned")).rejects.toThrow(Refusal);
    symlinkSync(path.join(outside, "nothing-yet.txt"), path.join(wd, "dangling.md"));
    await expect(writeConfined(wd, "dangling.md", "pwned")).rejects.toThrow(/resolves outside the working directory/);
    symlinkSync("nothing-here/yet.md", path.join(wd, "dangling-inside.md"));
    await expect(writeConfined(wd, "dangling-inside.md", "x")).rejects.toThrow(/symlink to nowhere/);
    expect(readdirSync(outside)).toEqual(["victim.txt"]);
    expect(victim()).toBe("precious");
  });

  test("a link to another file of the workdir writes that file", async () => {
    writeFileSync(path.join(wd, "real.md"), "inside");
    symlinkSync(path.join(wd, "real.md"), path.join(wd, "inner.md"));
    expect(await writeConfined(wd, "inner.md", "x")).toBe("real.md");
    expect(readFileSync(path.join(wd, "real.md"), "utf8")).toBe("x");
  });

  test("a FIFO is refused at once, with or without a reader, and never written", async () => {
    execFileSync("mkfifo", [path.join(wd, "output.md")]);
    await expect(writeConfined(wd, "output.md", "x")).rejects.toThrow(/not a regular file/);
  });

  test("a hard link to a file elsewhere is refused untouched", async () => {
    linkSync(path.join(outside, "victim.txt"), path.join(wd, "output.md"));
    await expect(writeConfined(wd, "output.md", "pwned")).rejects.toThrow(/hard links/);
    expect(victim()).toBe("precious");
  });

  test("a directory in the file's place is refused", async () => {
    mkdirSync(path.join(wd, "output.md"));
    await expect(writeConfined(wd, "output.md", "x")).rejects.toThrow();
  });

  test("a workdir that became a link is refused, even to a file name inside it", async () => {
    const moved = path.join(root, "moved");
    execFileSync("mv", [wd, moved]);
    symlinkSync(outside, wd);
    await expect(writeConfined(wd, "victim.txt", "pwned")).rejects.toThrow(/a symlink was put in its place/);
    await expect(writeConfined(wd, "new.md", "x")).rejects.toThrow(Refusal);
    expect(readdirSync(outside)).toEqual(["victim.txt"]);
    expect(victim()).toBe("precious");
  });

  test("a parent directory that is a link out is refused", async () => {
    symlinkSync(outside, path.join(wd, "sub"));
    await expect(writeConfined(wd, "sub/victim.txt", "pwned")).rejects.toThrow(/outside the working directory/);
    expect(victim()).toBe("precious");
  });
});

test("writeAnswerFile notes a refusal instead of throwing", async () => {
  symlinkSync(path.join(outside, "victim.txt"), path.join(wd, "output.md"));
  const notes: string[] = [];
  await writeAnswerFile(wd, "output.md", "answer", (line) => notes.push(line));
  expect(notes.join("")).toMatch(/\[corral\] could not write output\.md: refused: output\.md resolves outside the working directory/);
  expect(victim()).toBe("precious");
});
