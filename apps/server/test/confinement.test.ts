// A worker swaps directories of its workdir for symlinks to the server's data while the file tools
// and the file API walk and open it: nothing outside the workdir is ever read, listed or written.
import { spawn } from "node:child_process";
import { closeSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { globFiles, grepFiles } from "../src/agents/tools/search.js";
import { runFileTool } from "../src/agents/tools/file-tools.js";
import { loadConfig } from "../src/config.js";
import { snapshotDir } from "../src/jobs/file-watcher.js";
import { WorkdirService } from "../src/workdirs/service.js";
import { startFlipping } from "./fixtures/flipper.js";
import { tempDir } from "./helpers.js";

const SECRET = "TOKEN-0123456789-secret";
let root: string;
let wd: string;
let data: string;
beforeEach(() => {
  root = tempDir("corral-confinement-");
  wd = path.join(root, "w");
  data = path.join(root, "data");
  mkdirSync(wd);
  mkdirSync(data);
  writeFileSync(path.join(data, "token"), `${SECRET}\n`);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("grep while a worker swaps a directory it listed for a symlink", () => {
  test("the directory is skipped, never followed: the data dir's token is not returned", async () => {
    // `aa` is searched first and its lines make the pattern backtrack (each costs a fraction of a
    // second); `zz`, listed as a directory at the start, is a symlink to the data dir by the time
    // the walk gets to it: a walk that opens paths follows it.
    mkdirSync(path.join(wd, "aa"));
    for (let i = 0; i < 12; i++) writeFileSync(path.join(wd, "aa", `slow-${i}.txt`), `${"a".repeat(23)}!\n`);
    mkdirSync(path.join(wd, "zz"));
    writeFileSync(path.join(wd, "zz", "plain.txt"), "nothing here\n");
    const marker = path.join(root, "swapped-at");
    const swapper = spawn("sh", ["-c", `sleep 0.3 && mv zz zz.gone && ln -s "$1" zz && date +%s%3N > "$2"`, "sh", data, marker], {
      cwd: wd,
      stdio: "ignore",
    });
    const exited = new Promise((resolve) => swapper.once("exit", resolve));

    const answer = await grepFiles(wd, "^(a+)+$|TOKEN", { deadlineMs: 600_000 });
    const doneAt = Date.now();
    await exited;
    // The swap happened while grep walked, not after it.
    expect(Number(readFileSync(marker, "utf8"))).toBeLessThan(doneAt);
    expect(answer).not.toContain(SECRET);
    expect(answer).toBe("(no matches)");
  });

  test("a directory that is already a symlink when the walk opens it is skipped too (and one deeper down)", async () => {
    mkdirSync(path.join(wd, "sub/deeper"), { recursive: true });
    writeFileSync(path.join(wd, "sub/deeper/notes.txt"), "TOKEN-like but ours\n");
    const flipping = await startFlipping(path.join(wd, "sub/deeper"), data);
    try {
      for (let i = 0; i < 200; i++) {
        const answer = await grepFiles(wd, "TOKEN");
        expect(answer).not.toContain(SECRET);
        // Ours, wherever the flipping left it at that moment.
        for (const line of answer.split("\n")) expect(line).toMatch(/^\(no matches\)$|^sub\/deeper(\.as-dir)?\/notes\.txt:1: TOKEN-like but ours$/);
      }
    } finally {
      await flipping.stop();
    }
  });
});

describe("every file tool and the file API, with a parent swapped for a symlink back and forth", () => {
  /** `sub` flips between a real directory holding `token` (ours) and a link to the data dir. */
  async function flippingSub(): Promise<{ stop(): Promise<void> }> {
    mkdirSync(path.join(wd, "sub"));
    writeFileSync(path.join(wd, "sub", "token"), "ours\n");
    return startFlipping(path.join(wd, "sub"), data);
  }

  const ATTEMPTS = 400;

  test("read_file and list_files never read the data dir", async () => {
    const flipping = await flippingSub();
    try {
      for (let i = 0; i < ATTEMPTS; i++) {
        const read = await runFileTool(wd, "read_file", { path: "sub/token" });
        expect(read.text).not.toContain(SECRET);
        const listed = await runFileTool(wd, "list_files", { path: "sub" });
        expect(listed.text).not.toContain(SECRET);
      }
    } finally {
      await flipping.stop();
    }
  });

  test("write_file never writes into the data dir", async () => {
    const flipping = await flippingSub();
    try {
      for (let i = 0; i < ATTEMPTS; i++) await runFileTool(wd, "write_file", { path: `sub/new-${i}.txt`, content: "pwned" });
    } finally {
      await flipping.stop();
    }
    expect(readdirSync(data)).toEqual(["token"]);
    expect(readFileSync(path.join(data, "token"), "utf8")).toBe(`${SECRET}\n`);
  });

  test("glob never lists the data dir's files", async () => {
    writeFileSync(path.join(data, "only-in-data.db"), "x");
    const flipping = await flippingSub();
    try {
      for (let i = 0; i < ATTEMPTS; i++) expect(await globFiles(wd, "**/*.db")).toBe("(no files match)");
    } finally {
      await flipping.stop();
    }
  });

  test("the file API never reads or lists the data dir", async () => {
    writeFileSync(path.join(data, "only-in-data.db"), "x");
    const config = loadConfig({
      HOME: root,
      CORRAL_DATA_DIR: path.join(root, "corral-data"),
      CORRAL_WORKDIR_ROOTS: root,
      CORRAL_TOKEN: "t".repeat(24),
    });
    const workdirs = new WorkdirService({
      config,
      agents: { list: async () => [{ name: "scout", workdir: wd }] },
      files: { jobWorkdirs: async () => [] },
    });
    const flipping = await flippingSub();
    try {
      for (let i = 0; i < ATTEMPTS; i++) {
        const read = await workdirs.read(path.join(wd, "sub", "token"), 0, 1000).catch((err: Error) => err.message);
        expect(JSON.stringify(read)).not.toContain(SECRET);
        const listed = await workdirs.list(path.join(wd, "sub")).catch((err: Error) => err.message);
        expect(JSON.stringify(listed)).not.toContain("only-in-data");
        const raw = await workdirs.bytes(path.join(wd, "sub", "token"), undefined).catch(() => null);
        if (raw && "local" in raw) {
          const text = readFileSync(raw.local.fd, "utf8");
          closeSync(raw.local.fd);
          expect(text).not.toContain(SECRET);
        }
      }
    } finally {
      await flipping.stop();
    }
  });

  test("the snapshot of what a job changed never lists the data dir's files", async () => {
    for (let i = 0; i < 100; i++) writeFileSync(path.join(data, `only-in-data-${i}.db`), "x");
    const flipping = await flippingSub();
    try {
      // A walk by path lists them only when the link is there at its readdir and still there at
      // the lstat of a file: rarely, hence many walks.
      for (let i = 0; i < 10 * ATTEMPTS; i++) {
        const { files } = await snapshotDir(wd);
        expect([...files.keys()].filter((f) => f.includes("only-in-data"))).toEqual([]);
      }
    } finally {
      await flipping.stop();
    }
  });
});
