import { execFileSync } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statfsSync, writeFileSync, writeSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import type { ApiError, Job } from "@corral/shared";
import { groupAlive } from "../src/jobs/process-group.js";
import { jobDataPaths } from "../src/jobs/worker-process.js";
import { api, killGroupOf, printed, startServer, tempDir, type TestServer, until } from "./helpers.js";
import { unavailable } from "./required-tool.js";

/** Why a small file system of its own cannot be mounted for a data dir here (it needs root), or null. */
function noMount(): string | null {
  const probe = tempDir("corral-mount-probe-");
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", probe], { stdio: "pipe" });
    execFileSync("umount", [probe], { stdio: "pipe" });
    return null;
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim();
    return stderr || (err as Error).message;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

const why = noMount();
const canMount = why === null || unavailable(`a tmpfs cannot be mounted for a test's data dir (${why}): the full-disk tests need root`);

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A server whose data dir is a 16 MiB file system of its own, so a test can really fill it. */
async function onSmallDisk() {
  const root = tempDir();
  const dataDir = path.join(root, "data");
  mkdirSync(dataDir);
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=16m,mode=700", "tmpfs", dataDir]);
  cleanups.push(() => {
    // Lazily: a worker still dying may hold a file open there.
    execFileSync("umount", ["-l", dataDir]);
    rmSync(root, { recursive: true, force: true });
  });
  let server: TestServer | null = null;
  const start = async () => {
    server = await startServer({}, { root, dataDir });
    if (!(await server.services.agents.get("sh").catch(() => null)))
      await server.services.agents.create({ name: "sh", kind: "command", command: "sh", args: ["-c", "{prompt}"] });
    return server;
  };
  cleanups.push(async () => {
    await server?.app.close();
  });
  return { root, dataDir, start };
}

/** Kills a job's worker group at the end of a test, should it still be there. */
async function killAtEnd(server: TestServer, id: string): Promise<void> {
  const pid = await until(async () => (await server.services.jobs.get(id)).pid ?? undefined);
  cleanups.push(() => {
    if (groupAlive(pid)) killGroupOf(pid);
  });
}

/** Writes a file until the disk has no byte left. */
function fill(file: string): void {
  const fd = openSync(file, "a");
  try {
    for (const size of [1 << 20, 4096, 1]) {
      const chunk = Buffer.alloc(size, 120);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOSPC") throw err;
      }
    }
  } finally {
    closeSync(fd);
  }
}

const free = (dir: string) => statfsSync(dir).bavail * statfsSync(dir).bsize;
const launch = (server: TestServer, prompt: string, workdir: string) =>
  api<Job & ApiError>(server, "POST", "/api/jobs", { agent: "sh", prompt, workdir: path.join(server.root, workdir) });
const outputOf = async (server: TestServer, id: string) =>
  (await server.services.output.readOutput(id, 0, 1 << 24)).chunks.map((c) => c.text).join("");

describe.skipIf(!canMount)("a full disk under the data dir", () => {
  test("a worker that fills it is stopped: its job fails saying so, its output kept as far as written; launches answer 507 until there is room again", async () => {
    const disk = await onSmallDisk();
    const server = await disk.start();
    // It fills the disk once its first line is in the log (told by a file in its workdir); `yes`
    // ends at the full disk, and the worker would then sleep on, unrecorded, if it were not stopped.
    const filling = await launch(server, "echo first; until [ -e go ]; do sleep 0.05; done; yes 0123456789abcdef; sleep 600", "w");
    expect(filling.status).toBe(201);
    await killAtEnd(server, filling.body.id);
    await printed(server, filling.body.id, "first");
    writeFileSync(path.join(server.root, "w", "go"), "");
    const [ended] = await server.services.waits.waitFor([filling.body.id], 30_000);
    expect(ended?.status).toBe("failed");
    expect(ended?.error).toContain(`the disk that holds the data dir ${disk.dataDir} is full`);
    expect(ended?.error).toMatch(/stopped there: its output is kept as far as it was written \(\d+ bytes\)/);
    expect(ended?.exitCode).toBeNull();
    expect(groupAlive(ended?.pid as number)).toBe(false);
    // What the log holds reads to its end, and is what the worker printed.
    const text = await outputOf(server, filling.body.id);
    expect(text.startsWith("first\n")).toBe(true);
    expect(Buffer.byteLength(text)).toBe(ended?.outputBytes);
    const raw = readFileSync(jobDataPaths(disk.dataDir, filling.body.id).out, "utf8");
    expect(raw.startsWith(text)).toBe(true);

    // The server goes on serving; a launch says what is wrong and where, and stores nothing.
    expect((await api(server, "GET", "/api/health")).status).toBe(200);
    const refused = await launch(server, "echo hi", "w2");
    expect(refused.status).toBe(507);
    expect(refused.body.code).toBe("disk_full");
    expect(refused.body.error).toContain(`the disk that holds the data dir ${disk.dataDir} is full; free some space on it`);
    expect((await api<{ jobs: Job[] }>(server, "GET", "/api/jobs")).body.jobs.map((j) => j.id)).toEqual([filling.body.id]);
    expect((await api<Job>(server, "POST", `/api/jobs/${filling.body.id}/cancel`)).status).toBe(200);

    // Room again (the worker's raw capture removed): jobs run.
    rmSync(jobDataPaths(disk.dataDir, filling.body.id).out);
    const next = await launch(server, "echo hello again", "w3");
    expect(next.status).toBe(201);
    const [done] = await server.services.waits.waitFor([next.body.id], 15_000);
    expect(done?.status).toBe("succeeded");
    expect(await outputOf(server, next.body.id)).toBe("hello again\n");
  }, 60_000);

  test("cancel works while the disk is full, and a launch then is refused, naming the data dir", async () => {
    const disk = await onSmallDisk();
    const server = await disk.start();
    const job = await launch(server, "sleep 600", "w");
    await killAtEnd(server, job.body.id);
    await until(async () => ((await server.services.jobs.get(job.body.id)).status === "running" ? true : undefined));
    const filler = path.join(disk.dataDir, "filler");
    fill(filler);
    expect(free(disk.dataDir)).toBe(0);

    const cancelled = await api<Job>(server, "POST", `/api/jobs/${job.body.id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe("cancelled");
    expect(groupAlive(cancelled.body.pid as number)).toBe(false);
    const refused = await launch(server, "echo hi", "w2");
    expect(refused.status).toBe(507);
    expect(refused.body.error).toContain(disk.dataDir);

    rmSync(filler);
    const next = await launch(server, "echo back", "w3");
    expect(next.status).toBe(201);
    const [done] = await server.services.waits.waitFor([next.body.id], 15_000);
    expect(done?.status).toBe("succeeded");
  }, 60_000);

  test("a worker that fills it while the server is down still records its exit status; the restart ends the job with it", async () => {
    const disk = await onSmallDisk();
    const first = await disk.start();
    const job = await launch(first, "sleep 1; yes 0123456789abcdef; exit 7", "w");
    await until(async () => ((await first.services.jobs.get(job.body.id)).status === "running" ? true : undefined));
    const pid = (await first.services.jobs.get(job.body.id)).pid as number;
    await first.app.close();
    await until(() => (groupAlive(pid) ? undefined : true), 30_000, "the worker to fill the disk and end");
    expect(free(disk.dataDir)).toBe(0);
    // The wrapper wrote the code on a disk with no byte left.
    expect(readFileSync(jobDataPaths(disk.dataDir, job.body.id).exit, "utf8").trim()).toBe("7");

    const second = await disk.start();
    const [ended] = await second.services.waits.waitFor([job.body.id], 30_000);
    expect(ended?.status).toBe("failed");
    expect(ended?.exitCode).toBe(7);
    expect(ended?.error).toContain(`the disk that holds the data dir ${disk.dataDir} is full`);
  }, 60_000);
});
