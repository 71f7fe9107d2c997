import { readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { afterAll, expect, test } from "vitest";
import type { Job } from "@corral/shared";
import { groupAlive } from "../src/jobs/process-group.js";
import { sleep, tempDir, until } from "./helpers.js";
import { withRegistryOf } from "./registry-of.js";
import { startServerProcess, type ServerProcess } from "./server-process.js";

const root = tempDir();
const token = "crash-test-token-0123456789";
let port = 0;
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The real server as its own process, on the same port and data dir each time. */
async function startProcess(extraEnv: Record<string, string> = {}): Promise<ServerProcess> {
  const server = await startServerProcess(root, { CORRAL_PORT: String(port), CORRAL_TOKEN: token, ...extraEnv });
  port = server.port;
  return server;
}

async function rest<T>(method: string, url: string, body?: unknown): Promise<T> {
  const res = await fetch(`http://127.0.0.1:${port}${url}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return (await res.json()) as T;
}

test("kill -9 of the server while three jobs run: after a restart all three finish with full output", async () => {
  const first = await startProcess();
  const jobs: Job[] = [];
  for (const i of [1, 2, 3]) {
    jobs.push(
      await rest<Job>("POST", "/api/jobs", {
        agent: "kiro",
        prompt: `print 3\nsleep 2\nprint 3\nwrite done-${i}.txt ok`,
        workdir: path.join(root, `w${i}`),
      }),
    );
  }
  await until(async () => ((await rest<Job>("GET", `/api/jobs/${jobs[2]?.id}`)).status === "running" ? true : undefined));
  await sleep(300);
  const spawner = spawnerOf(first.child.pid as number);
  const killed = new Promise((resolve) => first.child.once("exit", resolve));
  first.child.kill("SIGKILL");
  await killed;
  // The spawner that started the workers saw its server go and went too; the workers did not
  // notice: their process groups are still there.
  await until(() => (hasExited(spawner) ? true : undefined), 5000, "the spawner to exit");
  for (const job of jobs) expect(groupAlive((await stored(job.id)).pid as number)).toBe(true);
  const second = await startProcess();
  try {
    for (const [i, job] of jobs.entries()) {
      const ended = await until(async () => {
        const now = await rest<Job>("GET", `/api/jobs/${job.id}`);
        return now.status === "running" ? undefined : now;
      }, 20_000);
      expect(ended.status).toBe("succeeded");
      expect(ended.exitCode).toBe(0);
      const page = await rest<{ chunks: { text: string }[] }>("GET", `/api/jobs/${job.id}/output?cursor=0`);
      expect(page.chunks.map((c) => c.text).join("")).toBe(
        `line 1\nline 2\nline 3\nline 1\nline 2\nline 3\nwrote done-${i + 1}.txt\ndone kiro-cli-chat\n`,
      );
      expect(readFileSync(path.join(root, `w${i + 1}`, `done-${i + 1}.txt`), "utf8")).toBe("ok");
    }
  } finally {
    await second.stop();
  }
}, 60_000);

/** The pid of the server's worker spawner (jobs/spawner.mjs), among its children. */
function spawnerOf(serverPid: number): number {
  const children = readdirSync(`/proc/${serverPid}/task`).flatMap((task) =>
    readFileSync(`/proc/${serverPid}/task/${task}/children`, "utf8").trim().split(" ").filter(Boolean).map(Number),
  );
  const spawner = children.find((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("spawner.mjs"));
  if (spawner === undefined) throw new Error(`no spawner among the children of ${serverPid}`);
  return spawner;
}

/**
 * Gone, or a zombie: once its server is killed the spawner is reparented to PID 1, which may reap
 * it only later, and the workers' own time runs meanwhile.
 */
function hasExited(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

/** The server is down: read what it stored for the job, straight from its registry. */
function stored(jobId: string) {
  return withRegistryOf(path.join(root, "data"), async (registry) => (await registry.jobs.get(jobId))!);
}

test("SIGTERM leaves workers running; with CORRAL_STOP_WORKERS_ON_EXIT=1 it cancels them first", async () => {
  const keep = await startProcess();
  const left = await rest<Job>("POST", "/api/jobs", { agent: "kiro", prompt: "hang", workdir: path.join(root, "keep") });
  await until(async () => ((await rest<Job>("GET", `/api/jobs/${left.id}`)).status === "running" ? true : undefined));
  const spawner = spawnerOf(keep.child.pid as number);
  expect(await keep.stop()).toBe(0);
  const leftPid = (await stored(left.id)).pid as number;
  expect(groupAlive(leftPid)).toBe(true);
  await until(() => (hasExited(spawner) ? true : undefined), 5000, "the spawner to exit");

  const stopping = await startProcess({ CORRAL_STOP_WORKERS_ON_EXIT: "1" });
  expect((await rest<Job>("GET", `/api/jobs/${left.id}`)).status).toBe("running");
  await stopping.stop();
  expect(groupAlive(leftPid)).toBe(false);
  expect((await stored(left.id)).status).toBe("cancelled");
}, 60_000);
