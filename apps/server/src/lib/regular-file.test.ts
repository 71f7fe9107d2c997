import { execFileSync } from "node:child_process";
import { closeSync, constants, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, test } from "vitest";
import { tempDir } from "../../test/helpers.js";
import { openRegularFile } from "./regular-file.js";

let dir: string;
beforeEach(() => {
  dir = tempDir("corral-regular-");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test("a link is never followed, even to a regular file: the path was checked, not where the link points", () => {
  writeFileSync(path.join(dir, "target.txt"), "secret");
  symlinkSync(path.join(dir, "target.txt"), path.join(dir, "link.txt"));
  expect(() => openRegularFile(path.join(dir, "link.txt"))).toThrow(expect.objectContaining({ code: "ELOOP" }));
  expect(() => openRegularFile(path.join(dir, "link.txt"), constants.O_WRONLY | constants.O_CREAT)).toThrow(
    expect.objectContaining({ code: "ELOOP" }),
  );
  expect(readFileSync(path.join(dir, "target.txt"), "utf8")).toBe("secret");
});

test("a FIFO opens without waiting for its other end and is refused, for reading and for writing", () => {
  const fifo = path.join(dir, "pipe");
  execFileSync("mkfifo", [fifo]);
  for (const flags of [constants.O_RDONLY, constants.O_WRONLY, constants.O_WRONLY | constants.O_CREAT]) {
    expect(() => openRegularFile(fifo, flags)).toThrow(
      expect.objectContaining({ status: 400, field: "path", message: expect.stringContaining("not a regular file") }),
    );
  }
});

test("a regular file opens, created when asked", () => {
  const { fd, stat } = openRegularFile(path.join(dir, "new.txt"), constants.O_WRONLY | constants.O_CREAT);
  closeSync(fd);
  expect(stat.isFile()).toBe(true);
  expect(() => openRegularFile(dir)).toThrow(/is a directory/);
});
