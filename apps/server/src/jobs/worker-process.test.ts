import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, expect, test } from "vitest";
import { processStartTicks } from "./process-group.js";
import { jobDataPaths, reattachWorker, spawnWorker, type JobDataPaths } from "./worker-process.js";

let root: string;
let files: JobDataPaths;
beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), "corral-worker-"));
  files = jobDataPaths(root, "job1");
  mkdirSync(files.dir, { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

test("the wrapper hands the worker its arguments untouched and records its exit code, owner-only", async () => {
  const worker = spawnWorker({ command: "/bin/sh", args: ["-c", 'printf "%s" "$1"; exit 3', "sh", "$(x) `y` 'z'"], cwd: root }, {}, files);
  expect(await worker.ended).toBe(3);
  expect(readFileSync(files.out, "utf8")).toBe("$(x) `y` 'z'");
  expect(readFileSync(files.exit, "utf8")).toBe("3\n");
  expect(statSync(files.exit).mode & 0o777).toBe(0o600);
});

test("a reattached worker whose exit file is still empty waits for the code instead of calling it unknown", async () => {
  // The wrapper writes the code in place: for a moment the file exists and is empty.
  const child = spawn("/bin/sh", ["-c", "sleep 30"], { detached: true, stdio: "ignore" });
  const pid = child.pid as number;
  try {
    writeFileSync(files.exit, "");
    const worker = reattachWorker(pid, processStartTicks(pid), files, 10);
    let settled = false;
    void worker.ended.then(() => (settled = true));
    await sleep(100);
    expect(settled).toBe(false);
    writeFileSync(files.exit, "7\n");
    expect(await worker.ended).toBe(7);
  } finally {
    process.kill(-pid, "SIGKILL");
  }
});

test("a reattached worker's end is seen when the wrapper writes its exit code, not at the next poll", async () => {
  const child = spawn("/bin/sh", ["-c", "sleep 30"], { detached: true, stdio: "ignore" });
  const pid = child.pid as number;
  try {
    // A poll this slow would outlast the test: only the watch on the job's dir can end it.
    const worker = reattachWorker(pid, processStartTicks(pid), files, 10 * 60_000);
    writeFileSync(files.exit, "5\n");
    expect(await worker.ended).toBe(5);
  } finally {
    process.kill(-pid, "SIGKILL");
  }
});
