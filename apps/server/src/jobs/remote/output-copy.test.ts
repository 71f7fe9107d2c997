import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, expect, test } from "vitest";
import type { JobOutputRow } from "../../db/schema.js";
import { readOutputBytes } from "../output-log.js";
import { RunnerOutputCopy } from "./output-copy.js";
import type { OutputEvent } from "../job-events.js";
import { jobDataPaths } from "../worker-process.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The job_output table as the copy reads it, in memory. */
function table() {
  const rows: JobOutputRow[] = [];
  return {
    rows,
    add: (jobId: string, stream: JobOutputRow["stream"], data: string) =>
      rows.push({ jobId, seq: rows.filter((r) => r.jobId === jobId).length + 1, stream, data, at: 0 }),
    after: async (jobId: string, seq: number, limit: number) => rows.filter((r) => r.jobId === jobId && r.seq > seq).slice(0, limit),
  };
}

const logText = (dataDir: string, jobId: string) =>
  readOutputBytes(jobDataPaths(dataDir, jobId).log, 0, 1 << 20)
    .chunks.map((c) => `${c.stream}:${c.data.toString("utf8")}`)
    .join("");

test("copies each chunk into the server's log once, in order, telling each, and goes on where it stopped after a restart", async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "corral-copy-"));
  dirs.push(dataDir);
  const output = table();
  const told: OutputEvent[] = [];
  const copy = new RunnerOutputCopy(output, dataDir, (event) => told.push(event));
  output.add("j1", "out", "line 1\n");
  output.add("j1", "err", "oops ✓\n");
  output.add("j2", "out", "other job\n");
  await copy.copy("j1");
  await copy.copy("j1");
  expect(logText(dataDir, "j1")).toBe("out:line 1\nerr:oops ✓\n");
  expect(told.map((e) => [e.jobId, e.stream, e.data.toString("utf8")])).toEqual([
    ["j1", "out", "line 1\n"],
    ["j1", "err", "oops ✓\n"],
  ]);
  // Each told chunk's cursor is where a read after it starts.
  expect(readOutputBytes(jobDataPaths(dataDir, "j1").log, told[0]?.cursor ?? 0, 1 << 20).chunks.map((c) => c.data.toString("utf8"))).toEqual([
    "oops ✓\n",
  ]);

  // A restarted server (a new copy) goes on after the last chunk copied.
  output.add("j1", "out", "line 3\n");
  const again = new RunnerOutputCopy(output, dataDir, () => {});
  await again.copy("j1");
  expect(logText(dataDir, "j1")).toBe("out:line 1\nerr:oops ✓\nout:line 3\n");
  // Many chunks are read a page at a time.
  for (let i = 0; i < 1200; i++) output.add("j2", "out", `${i}\n`);
  await again.copy("j2");
  expect(logText(dataDir, "j2").split("\n").length).toBe(1202);
});

test("copies asked for at once (a notification and a read) append each chunk once", async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "corral-copy-"));
  dirs.push(dataDir);
  const output = table();
  for (let i = 0; i < 20; i++) output.add("j1", "out", `${i}\n`);
  const copy = new RunnerOutputCopy(output, dataDir, () => {});
  await Promise.all([copy.copy("j1"), copy.copy("j1"), copy.copy("j1")]);
  // Adjacent chunks of one stream are read back together: the text, once, in order.
  expect(logText(dataDir, "j1")).toBe(`out:${Array.from({ length: 20 }, (_, i) => `${i}\n`).join("")}`);
});
