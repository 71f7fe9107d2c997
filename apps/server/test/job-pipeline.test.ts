// A job's path from launch to its stored end, as it was made cheaper: the workdir watched only
// once a job has run a while (and caught up then), the attempt stored with the job's state.
import { mkdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Job, JobStatus } from "@corral/shared";
import type { FileEvent } from "../src/jobs/file-watcher.js";
import { api, startServer, until, type TestServer } from "./helpers.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.close();
});

let n = 0;
async function launch(prompt: string, agent = "kiro"): Promise<Job> {
  const workdir = path.join(server.root, `p${++n}`);
  mkdirSync(workdir, { recursive: true });
  const res = await api<Job>(server, "POST", "/api/jobs", { agent, prompt, workdir });
  expect(res.status).toBe(201);
  return res.body;
}

describe("the workdir watcher", () => {
  test("a file written before the watcher started is announced while the job still runs", async () => {
    const events: FileEvent[] = [];
    const onFile = (event: FileEvent) => events.push(event);
    server.services.files.on("file", onFile);
    try {
      // Written at once by a shell (a Node fake would take longer to start than the watcher's
      // delay), then the worker waits: only the catch-up walk can announce the file before the
      // job is stopped.
      await server.services.agents.create({ name: "shell", kind: "command", command: "/bin/sh", args: ["-c", "{prompt}"] });
      const job = await launch("printf x > early.txt; exec sleep 60", "shell");
      const early = await until(() => events.find((e) => e.jobId === job.id), 15_000, "the file event of a running job");
      expect(early.file).toMatchObject({ path: "early.txt", change: "created", size: 1 });
      expect((await server.services.jobs.get(job.id)).status).toBe("running");
      expect((await server.services.cancels.cancel(job.id)).status).toBe("cancelled");
      expect((await server.services.files.list(job.id)).map((f) => [f.path, f.change])).toEqual([["early.txt", "created"]]);
    } finally {
      server.services.files.off("file", onFile);
    }
  });

  test("a job over before the watcher starts still reports every file it changed", async () => {
    const job = await launch("write a.txt 1\nwrite b.txt 22\ndelete a.txt\nwrite c.txt 333");
    const [ended] = await server.services.waits.waitFor([job.id], 30_000);
    expect(ended?.status).toBe("succeeded");
    expect((await server.services.files.list(job.id)).map((f) => [f.path, f.change, f.size])).toEqual([
      ["b.txt", "created", 2],
      ["c.txt", "created", 3],
    ]);
  });
});

describe("a job's attempts", () => {
  test("a worker that never started is still one attempt, failed with the reason, like its job", async () => {
    await server.services.agents.create({ name: "nowhere", kind: "command", command: "no-such-tool-for-attempts" });
    const job = await launch("x", "nowhere");
    const [ended] = await server.services.waits.waitFor([job.id], 30_000);
    expect(ended?.status).toBe("failed");
    const attempts = await server.services.jobs.attempts(job.id);
    expect(attempts.map((a) => [a.attempt, a.status])).toEqual([[1, "failed"]]);
    expect(attempts[0]?.error).toBe(ended?.error);
    expect(attempts[0]?.endedAt).not.toBeNull();
  });

  test("whenever the registry says running, the attempt is there as running", async () => {
    const seen = new Map<string, JobStatus[]>();
    const onJob = async (changed: Job) => {
      if (changed.status === "running")
        seen.set(
          changed.id,
          (await server.services.jobs.attempts(changed.id)).map((a) => a.status),
        );
    };
    server.services.jobEvents.on("job", onJob);
    try {
      const job = await launch("sleep 1");
      const [ended] = await server.services.waits.waitFor([job.id], 30_000);
      expect(ended?.status).toBe("succeeded");
      expect(seen.get(job.id)).toEqual(["running"]);
      expect((await server.services.jobs.attempts(job.id)).map((a) => a.status)).toEqual(["succeeded"]);
    } finally {
      server.services.jobEvents.off("job", onJob);
    }
  });
});
