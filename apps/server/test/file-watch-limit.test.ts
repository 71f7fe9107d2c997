import { mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { afterAll, expect, test } from "vitest";
import type { Job, JobFiles } from "@corral/shared";
import { MAX_JOB_FILES } from "../src/jobs/file-watcher.js";
import { connectMcp, textOf } from "./mcp-client.js";
import { sleep, tempDir } from "./helpers.js";
import { startServerProcess } from "./server-process.js";

const root = tempDir();
// 50,000 files take a while to remove on a busy machine.
afterAll(() => rmSync(root, { recursive: true, force: true }), 180_000);
const token = "file-watch-limit-token-0123456789";
const FILES = 50_000;

/** The server process's resident memory, from the kernel. */
const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) / 1024;

// A worker that waits for the live watcher to be up, then makes FILES files as fast as it can.
const MAKER = `setTimeout(() => {
  const fs = require("fs");
  for (let d = 0; d < ${FILES / 1000}; d++) {
    fs.mkdirSync("d" + d);
    for (let i = 0; i < 1000; i++) fs.writeFileSync("d" + d + "/f" + i, "x");
  }
}, 1000);`;

test(`a worker making ${FILES} files: the job's list stops at ${MAX_JOB_FILES} and says so, memory stays bounded, health answers meanwhile`, async () => {
  const server = await startServerProcess(root, { CORRAL_TOKEN: token });
  const pid = server.child.pid as number;
  const base = `http://127.0.0.1:${server.port}`;
  const rest = async <T>(method: string, url: string, body?: unknown): Promise<{ status: number; body: T }> => {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as T };
  };
  try {
    const workdir = path.join(root, "work");
    mkdirSync(workdir);
    expect((await rest("POST", "/api/agents", { name: "maker", kind: "command", command: process.execPath, args: ["-e", "{prompt}"] })).status).toBe(
      201,
    );
    const rssBefore = rssMiB(pid);
    const launched = await rest<Job>("POST", "/api/jobs", { agent: "maker", prompt: MAKER, workdir, timeoutS: 600 });
    expect(launched.status, JSON.stringify(launched.body)).toBe(201);

    // Health is asked again and again while the worker runs; every answer is kept, with the memory then.
    const health: { status: number; ms: number }[] = [];
    let rssPeak = rssBefore;
    let job = launched.body;
    while (job.status === "queued" || job.status === "running") {
      const asked = performance.now();
      const res = await fetch(`${base}/api/health`);
      health.push({ status: res.status, ms: Math.round(performance.now() - asked) });
      rssPeak = Math.max(rssPeak, rssMiB(pid));
      await sleep(100);
      job = (await rest<Job>("GET", `/api/jobs/${job.id}`)).body;
    }
    expect(job.status, job.error ?? "").toBe("succeeded");
    const files = (await rest<JobFiles>("GET", `/api/jobs/${job.id}/files`)).body;
    console.log(
      `${FILES} files made: ${files.files.length} listed (cut at ${files.cutAt}); server RSS ${rssBefore.toFixed(0)} MiB before, ${rssPeak.toFixed(0)} MiB at most; ` +
        `${health.length} health answers while it ran, slowest ${Math.max(...health.map((h) => h.ms))} ms`,
    );
    expect(files.files.length).toBe(MAX_JOB_FILES);
    expect(files.cutAt).toBe(MAX_JOB_FILES);
    expect(new Set(files.files.map((f) => f.change))).toEqual(new Set(["created"]));
    expect(health.length).toBeGreaterThan(2);
    expect(health.every((h) => h.status === 200)).toBe(true);
    // Generous: a list of 50,000 paths held in memory with chokidar's tree of them would not fit in it on its own.
    expect(rssPeak - rssBefore).toBeLessThan(250);

    const mcp = await connectMcp({ url: base, auth: { authorization: `Bearer ${token}` } });
    try {
      const done = textOf(await mcp.callTool({ name: "maker_done", arguments: { job_id: job.id } }));
      expect(done).toMatch(/^listo\ncreated: d0\/f0 \(1 B\), /);
      expect(done).toContain(
        `… ${MAX_JOB_FILES - 50} more\nfiles: more than ${MAX_JOB_FILES} changed; the list stops there (the job was no longer watched)\n`,
      );
    } finally {
      await mcp.close();
    }
  } finally {
    await server.stop();
  }
}, 300_000);
