import { execFileSync } from "node:child_process";
import {
  closeSync,
  constants,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, test } from "vitest";
import { tempDir } from "../../../test/helpers.js";
import { MAX_LIST_ENTRIES, MAX_READ_BYTES, runFileTool } from "./file-tools.js";

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
const fifos: string[] = [];
afterEach(() => {
  // Were a read still waiting on a FIFO (the defect these tests catch), a writer end releases it.
  for (const fifo of fifos.splice(0)) {
    try {
      closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // No reader waiting: nothing to release.
    }
  }
  rmSync(root, { recursive: true, force: true });
});

function mkfifo(name: string): string {
  const file = path.join(wd, name);
  execFileSync("mkfifo", [file]);
  fifos.push(file);
  return file;
}

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

test("a FIFO is refused at once for reading and writing, however many times it is asked", async () => {
  mkfifo("pipe");
  symlinkSync(path.join(wd, "pipe"), path.join(wd, "pipe-link"));
  // Node's file system thread pool has four threads: four reads left waiting would stall every file operation.
  const reads = await Promise.all(["pipe", "pipe", "pipe", "pipe", "pipe-link"].map((p) => runFileTool(wd, "read_file", { path: p })));
  for (const read of reads)
    expect(read).toEqual({ ok: false, text: expect.stringMatching(/^error: .*pipe is not a regular file \(device, FIFO or socket\)/) });
  const written = await runFileTool(wd, "write_file", { path: "pipe", content: "x" });
  expect(written).toEqual({ ok: false, text: expect.stringMatching(/^error: .*pipe is not a regular file/) });
  expect(lstatSync(path.join(wd, "pipe")).isFIFO()).toBe(true);
  // The thread pool is free: an ordinary file operation still completes.
  expect((await write("after.txt")).ok).toBe(true);
});

test("a huge file is read a bounded window at a time, and the model is told where it was cut and how to read on", async () => {
  const file = path.join(wd, "huge.log");
  const text = "0123456789abcde\n".repeat(8192); // 128 KiB of text
  writeFileSync(file, text);
  truncateSync(file, 400 * 1024 * 1024); // then a 400 MB sparse tail
  const size = statSync(file).size;
  const before = process.memoryUsage().rss;
  const first = await runFileTool(wd, "read_file", { path: "huge.log" });
  expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024);
  expect(first.ok).toBe(true);
  expect(first.text).toBe(
    `${text.slice(0, MAX_READ_BYTES)}\n[…cut at byte ${MAX_READ_BYTES} of ${size}; call read_file with offset ${MAX_READ_BYTES} to read on]`,
  );
  const second = await runFileTool(wd, "read_file", { path: "huge.log", offset: MAX_READ_BYTES });
  expect(second.text.startsWith(text.slice(MAX_READ_BYTES, 2 * MAX_READ_BYTES))).toBe(true);
  expect(second.text).toContain(`call read_file with offset ${2 * MAX_READ_BYTES} to read on`);
  expect(await runFileTool(wd, "read_file", { path: "huge.log", offset: String(size) })).toEqual({
    ok: true,
    text: `[end of file: huge.log has ${size} bytes]`,
  });
  expect(await runFileTool(wd, "read_file", { path: "huge.log", offset: size + 10 })).toEqual({
    ok: true,
    text: `[end of file: huge.log has ${size} bytes]`,
  });
  for (const offset of [-1, 1.5, "ten", true]) {
    expect((await runFileTool(wd, "read_file", { path: "huge.log", offset })).text).toBe(
      'error: refused: argument "offset" must be a whole number of bytes, 0 or more',
    );
  }
});

test("a cut never splits a character, and reading on from the offset given loses nothing", async () => {
  const text = "€".repeat(30_000); // 3 bytes each: a window of 64 KiB ends inside one
  writeFileSync(path.join(wd, "euros.txt"), text);
  const first = await runFileTool(wd, "read_file", { path: "euros.txt" });
  const cut = /offset (\d+) to read on\]$/.exec(first.text);
  expect(Number(cut?.[1])).toBe(MAX_READ_BYTES - (MAX_READ_BYTES % 3));
  const second = await runFileTool(wd, "read_file", { path: "euros.txt", offset: Number(cut?.[1]) });
  expect(first.text.slice(0, first.text.lastIndexOf("\n[…cut")) + second.text).toBe(text);
});

test("a binary file is described, not poured into the model's context", async () => {
  writeFileSync(path.join(wd, "image.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d]));
  expect(await runFileTool(wd, "read_file", { path: "image.png" })).toEqual({
    ok: false,
    text: "error: image.png is a binary file (8 bytes); read_file reads text files",
  });
});

test("a listing stops reading a huge directory at its bound and says there are more", async () => {
  mkdirSync(path.join(wd, "many"));
  for (let i = 0; i < MAX_LIST_ENTRIES + 50; i++) writeFileSync(path.join(wd, "many", `f${String(i).padStart(4, "0")}`), "");
  const lines = (await runFileTool(wd, "list_files", { path: "many" })).text.split("\n");
  expect(lines).toHaveLength(MAX_LIST_ENTRIES + 1);
  expect(lines.at(-1)).toBe(`[…listing stopped at ${MAX_LIST_ENTRIES} entries; there are more: list a subdirectory, or read a file by name]`);
  expect((await runFileTool(wd, "list_files", { path: "pipe-that-is-not-there" })).text).toBe("error: no such file or directory");
});
