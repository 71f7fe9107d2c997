import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, expect, test } from "vitest";
import type { JobOutputRow } from "../../db/schema.js";
import { OutputLog, readOutputBytes } from "../output-log.js";
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

test("a server killed at any point of a copy comes back with each chunk in its log once", async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "corral-copy-"));
  dirs.push(dataDir);
  const output = table();
  const { dir, log } = jobDataPaths(dataDir, "j1");
  // What a SIGKILL leaves is the data dir as it is at that instant: after each chunk is appended
  // (and told), a copy of it, then what a kill inside the next append leaves (its text written,
  // or its text and part of its record).
  const kills: { after: number; dataDir: string }[] = [];
  const killedAt = (after: number, partial: (jobDir: string) => void) => {
    const at = mkdtempSync(path.join(os.tmpdir(), "corral-killed-"));
    dirs.push(at);
    cpSync(dir, jobDataPaths(at, "j1").dir, { recursive: true });
    partial(jobDataPaths(at, "j1").dir);
    kills.push({ after, dataDir: at });
  };
  let appended = 0;
  const copy = new RunnerOutputCopy(output, dataDir, () => {
    appended++;
    killedAt(appended, () => {});
    killedAt(appended, (jobDir) => appendFileSync(path.join(jobDir, "output.data"), "next\n"));
    killedAt(appended, (jobDir) => {
      appendFileSync(path.join(jobDir, "output.data"), "next\n");
      appendFileSync(path.join(jobDir, "output.log"), '{"s":"out","p":');
    });
  });
  const lines = Array.from({ length: 6 }, (_, i) => `${i + 1}\n`);
  // Two copies (two notifications), so kills fall in a first copy and in a later one.
  for (const line of lines.slice(0, 3)) output.add("j1", "out", line);
  await copy.copy("j1");
  for (const line of lines.slice(3)) output.add("j1", "out", line);
  await copy.copy("j1");
  expect(readFileSync(log, "utf8").split("\n").filter(Boolean)).toHaveLength(6);
  expect(kills).toHaveLength(18);

  for (const kill of kills) {
    const told: string[] = [];
    await new RunnerOutputCopy(output, kill.dataDir, (event) => told.push(event.data.toString("utf8"))).copy("j1");
    expect({ after: kill.after, text: logText(kill.dataDir, "j1") }).toEqual({ after: kill.after, text: `out:${lines.join("")}` });
    // The restarted server tells only what it copied: the chunks after the kill.
    expect(told).toEqual(lines.slice(kill.after));
  }
});

test("a log copied by a server before the seq was kept in its records goes on after the chunk that server noted", async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "corral-copy-"));
  dirs.push(dataDir);
  const output = table();
  for (const line of ["1\n", "2\n", "3\n"]) output.add("j1", "out", line);
  const paths = jobDataPaths(dataDir, "j1");
  mkdirSync(paths.dir, { recursive: true });
  // As that server left it: two chunks in records without their seq, the last one's in runner-output.seq.
  const earlier = new OutputLog(paths.log);
  earlier.append("out", Buffer.from("1\n"));
  earlier.append("out", Buffer.from("2\n"));
  earlier.close();
  writeFileSync(path.join(paths.dir, "runner-output.seq"), "2");
  await new RunnerOutputCopy(output, dataDir, () => {}).copy("j1");
  expect(logText(dataDir, "j1")).toBe("out:1\n2\n3\n");
});
