import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, expect, test } from "vitest";
import type { InProcessAdapter, JobSpec } from "../agents/types.js";
import { startInProcess, type ExecutionListeners } from "./execution.js";
import { OutputLog } from "./output-log.js";
import { jobDataPaths } from "./worker-process.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "execution-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const listeners: ExecutionListeners = { chunk() {}, usage() {}, killed() {} };
const spec = { jobId: "j", prompt: "p", workdir: dir, model: null } as JobSpec;

function counting(): { adapter: InProcessAdapter; runs: () => number } {
  let runs = 0;
  const adapter: InProcessAdapter = {
    run(_spec, io) {
      runs++;
      io.write("out", "working\n");
      return Promise.resolve({ finalText: "done" });
    },
  };
  return { adapter, runs: () => runs };
}

function start(adapter: InProcessAdapter, name: string) {
  const files = jobDataPaths(dir, name);
  return startInProcess(adapter, spec, new OutputLog(path.join(dir, `${name}.log`)), listeners, files);
}

test("an in-process worker does nothing until it is let begin (its job stored as running), then runs once", async () => {
  const { adapter, runs } = counting();
  const execution = start(adapter, "a");
  await new Promise((resolve) => setTimeout(resolve, 20));
  expect(runs()).toBe(0);
  execution.begin?.();
  execution.begin?.();
  expect(await execution.ended).toEqual({ exitCode: 0, result: { finalText: "done" } });
  expect(runs()).toBe(1);
});

test("one stopped before it began (a cancel won the start) ends without running", async () => {
  const { adapter, runs } = counting();
  const execution = start(adapter, "b");
  await execution.stop();
  execution.begin?.();
  expect((await execution.ended).exitCode).toBeNull();
  expect(runs()).toBe(0);
});
