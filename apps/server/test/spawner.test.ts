import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import type { Job, OutputPage } from "@corral/shared";
import { api, sleep, startServer, tempDir, until, type TestServer } from "./helpers.js";
import { withRegistryOf } from "./registry-of.js";

/**
 * Workers are started by a small child of the server (jobs/spawner.mjs): a job's life must not
 * depend on it. These run a real server in this process, whose only child is its spawner.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

let n = 0;
const workdir = () => path.join(server.root, `w${++n}`);
const launch = async (prompt: string) => (await api<Job>(server, "POST", "/api/jobs", { agent: "kiro", prompt, workdir: workdir() })).body;
const job = async (id: string) => (await api<Job>(server, "GET", `/api/jobs/${id}`)).body;
const ended = (id: string) =>
  until(async () => {
    const now = await job(id);
    return now.status === "queued" || now.status === "running" ? undefined : now;
  }, 20_000);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The spawner of the server under test: this process's child running spawner.mjs. */
function spawnerPid(): number | undefined {
  return spawnerPids()[0];
}

/** Every spawner of the servers this process runs. */
function spawnerPids(): number[] {
  const children = readdirSync(`/proc/${process.pid}/task`).flatMap((task) =>
    readFileSync(`/proc/${process.pid}/task/${task}/children`, "utf8").trim().split(" ").filter(Boolean).map(Number),
  );
  return children.filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("spawner.mjs");
    } catch {
      return false;
    }
  });
}

test("the spawner killed while a job runs: the job is still followed to its end, and the next job starts a new spawner", async () => {
  const running = await launch("print 2\nsleep 1\nprint 1");
  await until(async () => ((await job(running.id)).status === "running" ? true : undefined));
  const first = spawnerPid() as number;
  expect(first).toBeDefined();
  process.kill(first, "SIGKILL");
  await until(() => (alive(first) ? undefined : true), 5000, "the spawner to die");
  const end = await ended(running.id);
  expect(end.status).toBe("succeeded");
  expect(end.exitCode).toBe(0);
  const page = (await api<OutputPage>(server, "GET", `/api/jobs/${running.id}/output?cursor=0`)).body;
  expect(page.chunks.map((c) => c.text).join("")).toContain("line 1\nline 2\nline 1\n");

  const next = await ended((await launch("exit 3")).id);
  expect(next.status).toBe("failed");
  expect(next.exitCode).toBe(3);
  const second = spawnerPid();
  expect(second).toBeDefined();
  expect(second).not.toBe(first);
}, 30_000);

test("a job cancelled while its worker is being started ends cancelled, and the worker is stopped at once", async () => {
  // Starts the spawner, then holds it: the next job's start waits on its answer.
  expect((await ended((await launch("print 1")).id)).status).toBe("succeeded");
  const spawner = spawnerPid() as number;
  process.kill(spawner, "SIGSTOP");
  const dir = workdir();
  let id: string;
  try {
    id = (await api<Job>(server, "POST", "/api/jobs", { agent: "kiro", prompt: "sleep 1\nwrite late.txt too late", workdir: dir })).body.id;
    await sleep(300);
    expect((await job(id)).status).toBe("queued");
    expect((await api<Job>(server, "POST", `/api/jobs/${id}/cancel`)).body.status).toBe("cancelled");
  } finally {
    process.kill(spawner, "SIGCONT");
  }
  // The worker did start once the spawner went on, and was stopped before it could write.
  await until(() => (existsSync(path.join(server.dataDir, "jobs", id, "attempt-1.stdout")) ? true : undefined), 5000, "the worker's start");
  await sleep(1500);
  expect(existsSync(path.join(dir, "late.txt"))).toBe(false);
  const now = await job(id);
  expect(now.status).toBe("cancelled");
  expect(now.pid).toBeNull();
}, 30_000);

test("a server closed while a worker is being started stops that worker, keeps the job queued, and its spawner exits", async () => {
  const closing = await startServer({}, { root: tempDir() });
  try {
    const launchOn = async (prompt: string, dir: string) =>
      (await api<Job>(closing, "POST", "/api/jobs", { agent: "kiro", prompt, workdir: path.join(closing.root, dir) })).body;
    const others = spawnerPids();
    const warm = await launchOn("print 1", "warm");
    await until(async () => ((await api<Job>(closing, "GET", `/api/jobs/${warm.id}`)).body.status === "succeeded" ? true : undefined));
    const spawner = spawnerPids().find((pid) => !others.includes(pid));
    expect(spawner).toBeDefined();
    process.kill(spawner as number, "SIGSTOP");
    const late = await launchOn("sleep 1\nwrite late.txt too late", "late");
    await sleep(300);
    await closing.app.close();
    process.kill(spawner as number, "SIGCONT");
    // Once its start is answered the spawner goes; the worker it started was stopped before it could write.
    await until(() => (alive(spawner as number) ? undefined : true), 5000, "the spawner to exit");
    expect(existsSync(path.join(closing.dataDir, "jobs", late.id, "attempt-1.stdout"))).toBe(true);
    await sleep(1500);
    expect(existsSync(path.join(closing.root, "late", "late.txt"))).toBe(false);
    expect((await withRegistryOf(closing.dataDir, (registry) => registry.jobs.get(late.id)))?.status).toBe("queued");
  } finally {
    rmSync(closing.root, { recursive: true, force: true });
  }
}, 30_000);
