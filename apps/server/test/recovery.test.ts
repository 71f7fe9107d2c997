import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, expect, test } from "vitest";
import { jobDataPaths } from "../src/jobs/worker-process.js";
import { groupAlive } from "../src/jobs/process-group.js";
import { killGroupOf, sleep, startServer, tempDir, type TestServer, until, workerPid } from "./helpers.js";
import { withRegistryOf } from "./registry-of.js";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

async function restartable() {
  const root = tempDir();
  roots.push(root);
  const start = () => startServer({}, { root });
  return { root, start };
}

const outputOf = async (server: TestServer, id: string) =>
  (await server.services.output.readOutput(id, 0, 1 << 24)).chunks.map((c) => c.text).join("");

test("a worker keeps running while the server is down and is picked up at the next start", async () => {
  const { root, start } = await restartable();
  const first = await start();
  const job = await first.services.launches.launch(
    "kiro",
    { prompt: "print 3\nsleep 1.5\nprint 2\nwrite after.txt ok", workdir: path.join(root, "w") },
    "rest",
  );
  await sleep(500);
  await first.app.close();
  const second = await start();
  try {
    const [ended] = await second.services.waits.waitFor([job.id], 15_000);
    expect(ended?.status).toBe("succeeded");
    expect(ended?.exitCode).toBe(0);
    expect(await outputOf(second, job.id)).toBe("line 1\nline 2\nline 3\nline 1\nline 2\nwrote after.txt\ndone kiro-cli-chat\n");
  } finally {
    await second.app.close();
  }
});

test("a worker that ended while the server was down gets its recorded exit status", async () => {
  const { root, start } = await restartable();
  const first = await start();
  const job = await first.services.launches.launch("kiro", { prompt: "sleep 0.5\nstderr bad things\nexit 4", workdir: path.join(root, "w") }, "rest");
  await sleep(200);
  await first.app.close();
  await sleep(1500);
  const second = await start();
  try {
    const [ended] = await second.services.waits.waitFor([job.id], 10_000);
    expect(ended?.status).toBe("failed");
    expect(ended?.exitCode).toBe(4);
    expect(ended?.error).toContain("bad things");
  } finally {
    await second.app.close();
  }
});

test("a worker that ended while the server was down keeps its own end time, not the time the restart noticed", async () => {
  const { root, start } = await restartable();
  const first = await start();
  const job = await first.services.launches.launch("kiro", { prompt: "sleep 0.5\nprint 2", workdir: path.join(root, "w") }, "rest");
  const running = await until(async () => {
    const now = await first.services.jobs.get(job.id);
    return now.status === "running" ? now : undefined;
  });
  await first.app.close();
  await until(() => (groupAlive(running.pid as number) ? undefined : true), 10_000, "the worker to end");
  const wentDown = Date.now();
  // The server stays down well past the worker's end.
  await sleep(1500);
  const restarted = Date.now();
  const second = await start();
  try {
    const [ended] = await second.services.waits.waitFor([job.id], 10_000);
    expect(ended?.status).toBe("succeeded");
    expect(ended?.endedAt).toBeGreaterThanOrEqual(running.startedAt as number);
    expect(ended?.endedAt).toBeLessThanOrEqual(wentDown);
    expect(ended?.endedAt).toBeLessThan(restarted);
    const [attempt] = await second.services.jobs.attempts(job.id);
    expect(attempt?.endedAt).toBe(ended?.endedAt);
  } finally {
    await second.app.close();
  }
});

test("a worker gone without an exit status is marked lost, with the reason", async () => {
  const { root, start } = await restartable();
  const first = await start();
  const job = await first.services.launches.launch("kiro", { prompt: "hang", workdir: path.join(root, "w") }, "rest");
  const pid = await workerPid(first, job.id);
  await first.app.close();
  killGroupOf(pid);
  await sleep(300);
  rmSync(jobDataPaths(path.join(root, "data"), job.id, 1).exit, { force: true });
  const second = await start();
  try {
    const lost = await second.services.jobs.get(job.id);
    expect(lost.status).toBe("lost");
    expect(lost.error).toMatch(/left no exit status/);
  } finally {
    await second.app.close();
  }
});

test("queued jobs wait again in order after a restart", async () => {
  const { root, start } = await restartable();
  const first = await start();
  await first.services.agents.update("kiro", { maxConcurrent: 1 });
  const ids: string[] = [];
  for (const i of [0, 1, 2]) {
    const job = await first.services.launches.launch(
      "kiro",
      { prompt: `sleep 0.3\nwrite q${i}.txt ${i}`, workdir: path.join(root, "q"), sharedWorkdir: true },
      "rest",
    );
    ids.push(job.id);
  }
  await first.app.close();
  const second = await start();
  try {
    const ended = await second.services.waits.waitFor(ids, 15_000);
    expect(ended.map((j) => j.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
    const starts = ended.map((j) => j.startedAt as number);
    expect([...starts].sort((a, b) => a - b)).toEqual(starts);
  } finally {
    await second.app.close();
  }
});

test("files a job changes before, during and after the outage are all reported", async () => {
  const { root, start } = await restartable();
  const workdir = path.join(root, "files");
  mkdirSync(workdir, { recursive: true });
  writeFileSync(path.join(workdir, "old.txt"), "keep?");
  writeFileSync(path.join(workdir, "same.txt"), "untouched");
  const first = await start();
  const job = await first.services.launches.launch("kiro", { prompt: "write a.txt 1\nsleep 1\nwrite b.txt 2\ndelete old.txt", workdir }, "rest");
  await sleep(400);
  await first.app.close();
  await sleep(1500);
  const second = await start();
  try {
    const [ended] = await second.services.waits.waitFor([job.id], 10_000);
    expect(ended?.status).toBe("succeeded");
    const files = (await second.services.files.list(job.id)).map((f) => [f.path, f.change]);
    expect(files).toEqual([
      ["a.txt", "created"],
      ["b.txt", "created"],
      ["old.txt", "deleted"],
    ]);
  } finally {
    await second.app.close();
  }
});

test("a job started in an empty workdir (no snapshot file is kept for it): files it makes during and after the outage are reported", async () => {
  const { root, start } = await restartable();
  const workdir = path.join(root, "empty");
  mkdirSync(workdir, { recursive: true });
  const first = await start();
  const job = await first.services.launches.launch("kiro", { prompt: "write a.txt 1\nsleep 1\nwrite b.txt 2", workdir }, "rest");
  await sleep(400);
  await first.app.close();
  await sleep(1500);
  const second = await start();
  try {
    const [ended] = await second.services.waits.waitFor([job.id], 10_000);
    expect(ended?.status).toBe("succeeded");
    expect((await second.services.files.list(job.id)).map((f) => [f.path, f.change])).toEqual([
      ["a.txt", "created"],
      ["b.txt", "created"],
    ]);
  } finally {
    await second.app.close();
  }
});

/** Writes a job row straight into the registry, as a bug, an older version or a hand edit could leave it. */
async function insertJob(root: string, row: Record<string, unknown>): Promise<void> {
  const columns = Object.keys(row);
  await withRegistryOf(path.join(root, "data"), (registry) =>
    registry.run(`insert into jobs (${columns.join(", ")}) values (${columns.map(() => "?").join(", ")})`, Object.values(row)),
  );
}

const poisonedRow = (id: string, agent: string, root: string, extra: Record<string, unknown> = {}) => ({
  id,
  agent,
  status: "queued",
  prompt: "p",
  workdir: path.join(root, id),
  timeout_s: 60,
  origin: "rest",
  created_at: Date.now(),
  ...extra,
});

test("a queued job too big to start, left in the registry, fails with the reason while the server comes up", async () => {
  const { root, start } = await restartable();
  const first = await start();
  // 200 arguments of 500 {prompt}s each: with a 100 kB prompt, 10 GB of command line if it were built.
  await first.services.agents.create({
    name: "echo_many",
    kind: "command",
    command: "echo",
    args: Array.from({ length: 200 }, () => "{prompt}".repeat(500)),
  });
  await first.app.close();
  await insertJob(root, poisonedRow("poison000001", "echo_many", root, { prompt: "p".repeat(100_000) }));
  const second = await start();
  try {
    const health = await fetch(`${second.url}/api/health`);
    expect(health.status).toBe(200);
    const [job] = await second.services.waits.waitFor(["poison000001"], 10_000);
    expect(job?.status).toBe("failed");
    expect(job?.error).toMatch(/command line 100000 times.*over Corral's limit of 1 MiB/);
    // The agent still runs jobs that fit.
    const small = await second.services.launches.launch("echo_many", { prompt: "p", workdir: path.join(root, "small") }, "rest");
    const [ok] = await second.services.waits.waitFor([small.id], 10_000);
    expect(ok?.status).toBe("succeeded");
  } finally {
    await second.app.close();
  }
});

test("a running job that cannot be picked up again ends lost with why, and the rest of recovery goes on", async () => {
  const { root, start } = await restartable();
  const first = await start();
  await first.app.close();
  // Its worker's exit status is there, but its output log cannot be opened (a directory in its place).
  const files = jobDataPaths(path.join(root, "data"), "broken000001", 1);
  mkdirSync(files.log, { recursive: true });
  writeFileSync(files.exit, "0\n");
  const invocation = JSON.stringify({ command: "kiro-cli-chat", args: [], cwd: root });
  await insertJob(root, poisonedRow("broken000001", "kiro", root, { status: "running", pid: 4194304, invocation, created_at: 1 }));
  // A queued one whose start throws where nothing should (the same broken log).
  mkdirSync(jobDataPaths(path.join(root, "data"), "stuck0000001", 1).log, { recursive: true });
  await insertJob(root, poisonedRow("stuck0000001", "kiro", root, { created_at: 2 }));
  await insertJob(root, poisonedRow("queued000001", "kiro", root, { prompt: "write after.txt ok", created_at: 3 }));
  const second = await start();
  try {
    const lost = await second.services.jobs.get("broken000001");
    expect(lost.status).toBe("lost");
    expect(lost.error).toMatch(/^the server could not recover this job at start: .*EISDIR/);
    // Its start is under way as the server comes up (over PostgreSQL's network, still).
    const [stuck] = await second.services.waits.waitFor(["stuck0000001"], 10_000);
    expect(stuck?.status).toBe("failed");
    expect(stuck?.error).toMatch(/^internal error: .*EISDIR/);
    const [queued] = await second.services.waits.waitFor(["queued000001"], 10_000);
    expect(queued?.status).toBe("succeeded");
  } finally {
    await second.app.close();
  }
});

test("a retried attempt picked up after a restart has its own whole timeout, not what its first attempt left", async () => {
  const { root, start } = await restartable();
  const first = await start();
  const counter = path.join(root, "runs");
  const job = await first.services.launches.launch(
    "kiro",
    {
      prompt: `sleep 4\nfail-until ${counter} 1 1 first run`,
      workdir: path.join(root, "w"),
      timeoutS: 6,
      retry: { maxAttempts: 2, exitCodes: [1], outputPatterns: [], backoffS: 0.3 },
    },
    "rest",
  );
  // The second attempt runs, and the job's own start (its first attempt's) is past its timeout.
  for (;;) {
    const now = await first.services.jobs.get(job.id);
    if (now.attempt === 2 && now.status === "running" && now.startedAt !== null && Date.now() > now.startedAt + 6200) break;
    expect(now.status === "queued" || now.status === "running").toBe(true);
    await sleep(50);
  }
  await first.app.close();
  const second = await start();
  try {
    const [ended] = await second.services.waits.waitFor([job.id], 15_000);
    expect(ended?.status).toBe("succeeded");
    expect((await second.services.jobs.attempts(job.id)).map((a) => a.status)).toEqual(["failed", "succeeded"]);
  } finally {
    await second.app.close();
  }
});
