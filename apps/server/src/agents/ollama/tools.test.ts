import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, test } from "vitest";
import { tempDir } from "../../../test/helpers.js";
import { runFileTool } from "./tools.js";

let root: string;
let wd: string;
let outside: string;
beforeEach(() => {
  root = tempDir("corral-tools-");
  wd = path.join(root, "w");
  outside = path.join(root, "outside");
  mkdirSync(wd);
  mkdirSync(outside);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const write = (p: unknown) => runFileTool(wd, "write_file", { path: p, content: "x" });

test("writes inside the workdir, creating parents; absolute paths inside are fine", async () => {
  expect(await write("a/b/c.txt")).toEqual({ ok: true, text: "wrote 1 bytes to a/b/c.txt", wrote: "a/b/c.txt" });
  expect((await write(path.join(wd, "abs.txt"))).ok).toBe(true);
  expect(readFileSync(path.join(wd, "a/b/c.txt"), "utf8")).toBe("x");
});

test("refuses .., absolute paths elsewhere, links pointing out (followed or dangling), the workdir itself, empty paths and NUL bytes", async () => {
  symlinkSync(outside, path.join(wd, "link"));
  symlinkSync(path.join(outside, "d.txt"), path.join(wd, "dangling.txt"));
  writeFileSync(path.join(outside, "secret.txt"), "secret");
  symlinkSync(path.join(outside, "secret.txt"), path.join(wd, "secret.txt"));
  for (const p of ["../x", "a/../../x", "link/y.txt", "link", "dangling.txt", "secret.txt", path.join(outside, "abs.txt"), ".", "", "  ", "a\0b"]) {
    const outcome = await write(p);
    expect(outcome.ok, p).toBe(false);
    expect(outcome.text, p).toMatch(/^error: refused: /);
  }
  expect(readdirSync(outside)).toEqual(["secret.txt"]);
  expect(readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe("secret");
  expect((await runFileTool(wd, "read_file", { path: "secret.txt" })).text).toMatch(/^error: refused: /);
  expect((await runFileTool(wd, "list_files", { path: "link" })).text).toMatch(/^error: refused: /);
});

test("reads and lists; bad arguments and unknown tools come back as tool errors", async () => {
  await write("notes/a.md");
  symlinkSync(path.join(wd, "notes"), path.join(wd, "inside-link"));
  expect(await runFileTool(wd, "read_file", { path: "inside-link/a.md" })).toEqual({ ok: true, text: "x" });
  expect((await runFileTool(wd, "list_files", {})).text).toBe("inside-link@\nnotes/");
  expect((await runFileTool(wd, "read_file", { path: "missing.txt" })).text).toBe("error: no such file or directory");
  expect((await runFileTool(wd, "read_file", { path: "notes" })).text).toContain("directory");
  expect((await runFileTool(wd, "write_file", { path: 3, content: "x" })).text).toBe('error: refused: argument "path" must be a string');
  expect((await runFileTool(wd, "write_file", { path: "a.txt" })).text).toBe('error: refused: missing argument "content"');
  expect((await runFileTool(wd, "rm_rf", {})).text).toContain("unknown tool rm_rf");
});
