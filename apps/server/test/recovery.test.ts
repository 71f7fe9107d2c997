import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, expect, test } from "vitest";
import { jobFiles } from "../src/jobs/worker-process.js";
import { sleep, startServer, tempDir, type TestServer } from "./helpers.js";

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

const outputOf = (server: TestServer, id: string) =>
  server.services.jobs
    .readOutput(id, 0, 1 << 24)
    .chunks.map((c) => c.text)
    .join("");

test("a worker keeps running while the server is down and is picked up at the next start", async () => {
  const { root, start } = await restartable();
  const first = await start();
  const job = first.services.jobs.launch("kiro", { prompt: "print 3\nsleep 1.5\nprint 2\nwrite after.txt ok", workdir: path.join(root, "w") }, "rest");
  await sleep(500);
  await first.app.close();
  const second = await start();
  try {
    const [ended] = await second.services.jobs.waitFor([job.id], 15_000);
    expect(ended?.status).toBe("succeeded");
    expect(ended?.exitCode).toBe(0);
    expect(outputOf(second, job.id)).toBe("line 1\nline 2\nline 3\nline 1\nline 2\nwrote after.txt\ndone kiro-cli-chat\n");
  } finally {
    await second.app.close();
  }
});

test("a worker that ended while the server was down gets its recorded exit status", async () => {
  const { root, start } = await restartable();
  const first = await start();
  const job = first.services.jobs.launch("kiro", { prompt: "sleep 0.5\nstderr bad things\nexit 4", workdir: path.join(root, "w") }, "rest");
  await sleep(200);
  await first.app.close();
  await sleep(1500);
  const second = await start();
  try {
    const [ended] = await second.services.jobs.waitFor([job.id], 10_000);
    expect(ended?.status).toBe("failed");
    expect(ended?.exitCode).toBe(4);
    expect(ended?.error).toContain("bad things");
  } finally {
    await second.app.close();
  }
});

test("a worker gone without an exit status is marked lost, with the reason", async () => {
  const { root, start } = await restartable();
  const first = await start();
  const job = first.services.jobs.launch("kiro", { prompt: "hang", workdir: path.join(root, "w") }, "rest");
  await sleep(300);
  const pid = first.services.jobs.get(job.id).pid as number;
  await first.app.close();
  process.kill(-pid, "SIGKILL");
  await sleep(300);
  rmSync(jobFiles(path.join(root, "data"), job.id, 1).exit, { force: true });
  const second = await start();
  try {
    const lost = second.services.jobs.get(job.id);
    expect(lost.status).toBe("lost");
    expect(lost.error).toMatch(/left no exit status/);
  } finally {
    await second.app.close();
  }
});

test("queued jobs wait again in order after a restart", async () => {
  const { root, start } = await restartable();
  const first = await start();
  first.services.agents.update("kiro", { maxConcurrent: 1 });
  const ids = [0, 1, 2].map((i) => first.services.jobs.launch("kiro", { prompt: `sleep 0.3\nwrite q${i}.txt ${i}`, workdir: path.join(root, "q"), shared_workdir: true }, "rest").id);
  await first.app.close();
  const second = await start();
  try {
    const ended = await second.services.jobs.waitFor(ids, 15_000);
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
  const job = first.services.jobs.launch("kiro", { prompt: "write a.txt 1\nsleep 1\nwrite b.txt 2\ndelete old.txt", workdir }, "rest");
  await sleep(400);
  await first.app.close();
  await sleep(1500);
  const second = await start();
  try {
    const [ended] = await second.services.jobs.waitFor([job.id], 10_000);
    expect(ended?.status).toBe("succeeded");
    const files = second.services.files.list(job.id).map((f) => [f.path, f.change]);
    expect(files).toEqual([
      ["a.txt", "created"],
      ["b.txt", "created"],
      ["old.txt", "deleted"],
    ]);
  } finally {
    await second.app.close();
  }
});
