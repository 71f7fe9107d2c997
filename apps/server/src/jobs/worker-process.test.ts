import { spawn } from "node:child_process";
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, expect, test } from "vitest";
import { processStartTicks } from "./process-group.js";
import { type NotSpawned, Spawner, type SpawnRequest } from "./spawner.js";
import { findWrapper, isSameProcessAlive, jobDataPaths, readExit, reattachWorker, spawnWorker, type JobDataPaths } from "./worker-process.js";

let root: string;
let files: JobDataPaths;
let spawner: Spawner;
beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), "corral-worker-"));
  files = jobDataPaths(root, "job1");
  mkdirSync(files.dir, { recursive: true });
  spawner = new Spawner();
});
afterEach(() => {
  spawner.close();
  rmSync(root, { recursive: true, force: true });
});

test("the wrapper hands the worker its arguments untouched and records its exit code and time, owner-only", async () => {
  const before = Date.now();
  const worker = await spawnWorker(
    { command: "/bin/sh", args: ["-c", 'printf "%s" "$1"; sleep 0.2; exit 3', "sh", "$(x) `y` 'z'"], cwd: root },
    {},
    files,
    spawner,
  );
  expect(readExit(files.exit)).toBeNull();
  const ended = await worker.ended;
  expect(ended.code).toBe(3);
  expect(readFileSync(files.out, "utf8")).toBe("$(x) `y` 'z'");
  // Written over the placeholder at the worker's end: its time is the exit's (the file system's clock may lag by a tick).
  const recorded = readExit(files.exit);
  expect(recorded?.code).toBe(3);
  expect(recorded?.at).toBeGreaterThanOrEqual(before + 150);
  expect(recorded?.at).toBeLessThanOrEqual(Date.now());
  expect(statSync(files.exit).mode & 0o777).toBe(0o600);
});

test("a link left at the exit file's path is replaced, never written through", async () => {
  const victim = path.join(root, "victim.txt");
  writeFileSync(victim, "keep me");
  symlinkSync(victim, files.exit);
  const worker = await spawnWorker({ command: "/bin/sh", args: ["-c", "exit 3"], cwd: root }, {}, files, spawner);
  expect((await worker.ended).code).toBe(3);
  expect(readFileSync(victim, "utf8")).toBe("keep me");
  expect(lstatSync(files.exit).isFile()).toBe(true);
  expect(readExit(files.exit)?.code).toBe(3);
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
    expect((await worker.ended).code).toBe(7);
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
    expect((await worker.ended).code).toBe(5);
  } finally {
    process.kill(-pid, "SIGKILL");
  }
});

/** Until `check` holds, or fails the test after a few seconds. */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 250 && !check(); i++) await sleep(20);
  expect(check()).toBe(true);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test("a worker that cannot start fails with the reason, and the spawner goes on starting the next", async () => {
  const missing = path.join(root, "gone");
  await expect(spawnWorker({ command: "/bin/true", args: [], cwd: missing }, {}, files, spawner)).rejects.toThrow("could not start /bin/true");
  const worker = await spawnWorker({ command: "/bin/sh", args: ["-c", "exit 4"], cwd: root }, {}, files, spawner);
  expect((await worker.ended).code).toBe(4);
});

test("the spawner reaps what it started: no zombie is left behind", async () => {
  const worker = await spawnWorker({ command: "/bin/true", args: [], cwd: root }, {}, files, spawner);
  expect((await worker.ended).code).toBe(0);
  const spawnerPid = spawner.pid as number;
  const children = readFileSync(`/proc/${spawnerPid}/task/${spawnerPid}/children`, "utf8").trim();
  expect(children).toBe("");
  expect(processStartTicks(worker.pid)).toBeNull();
});

test("a worker whose spawner was killed is still followed to its end, and the next worker gets a new spawner", async () => {
  const gate = path.join(root, "gate");
  const worker = await spawnWorker(
    { command: "/bin/sh", args: ["-c", 'while [ ! -e "$1" ]; do sleep 0.02; done; exit 6', "sh", gate], cwd: root },
    {},
    files,
    spawner,
  );
  const first = spawner.pid as number;
  process.kill(first, "SIGKILL");
  await until(() => !alive(first));
  expect(alive(worker.pid)).toBe(true);
  writeFileSync(gate, "");
  expect((await worker.ended).code).toBe(6);
  const next = await spawnWorker({ command: "/bin/sh", args: ["-c", "exit 2"], cwd: root }, {}, jobDataPaths(root, "job1", 2), spawner);
  expect(spawner.pid).not.toBe(first);
  expect((await next.ended).code).toBe(2);
});

test("closing the spawner leaves its workers running, and it exits on its own", async () => {
  const worker = await spawnWorker({ command: "/bin/sh", args: ["-c", "sleep 30"], cwd: root }, {}, files, spawner);
  const spawnerPid = spawner.pid as number;
  try {
    spawner.close();
    await until(() => !alive(spawnerPid));
    expect(isSameProcessAlive(worker.pid, worker.pidStart)).toBe(true);
  } finally {
    process.kill(-worker.pid, "SIGKILL");
  }
});

/**
 * A spawner killed between starting a worker and answering: this one starts the worker exactly as
 * spawner.mjs does, then answers as a spawner that ended first.
 */
function spawnerKilledBeforeAnswering(): Spawner {
  return {
    async spawn(request: SpawnRequest): Promise<NotSpawned> {
      spawn(request.file, request.args, { cwd: request.cwd, env: request.env, detached: true, stdio: "ignore" }).unref();
      return { error: "the worker spawner ended before it started the worker", unanswered: true };
    },
  } as unknown as Spawner;
}

test("a worker started by a spawner that ended before answering is still followed to its exit code", async () => {
  const worker = await spawnWorker({ command: "/bin/sh", args: ["-c", "sleep 0.3; exit 4"], cwd: root }, {}, files, spawnerKilledBeforeAnswering());
  expect(isSameProcessAlive(worker.pid, worker.pidStart)).toBe(true);
  expect((await worker.ended).code).toBe(4);
});

test("a worker that ran and ended before its spawner's end was noticed fails its start, saying it ran", async () => {
  const gone = spawnerKilledBeforeAnswering();
  const quick = {
    spawn: async (request: SpawnRequest) => {
      const answer = await gone.spawn(request);
      while (readExitFileOrNull(files.exit) === null || findWrapper(files.exit)) await sleep(10);
      return answer;
    },
  } as unknown as Spawner;
  await expect(spawnWorker({ command: "/bin/sh", args: ["-c", "exit 5"], cwd: root }, {}, files, quick)).rejects.toThrow(
    "the worker spawner ended before it started the worker; it ran all the same and exited with code 5",
  );
});

function readExitFileOrNull(file: string): string | null {
  try {
    return readFileSync(file, "utf8").trim() || null;
  } catch {
    return null;
  }
}
