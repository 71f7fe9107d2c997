import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Job, OutputPage, ReadablePage } from "@corral/shared";
import { api, startServer, type TestServer } from "./helpers.js";

/**
 * An output of many short lines, read through REST as the panel reads it: the Readable view once
 * answered 500 (`Maximum call stack size exceeded`, a spread of every line of a page).
 */

const BYTES = 3_000_000;
const LIMIT = 1024 * 1024;

let server: TestServer;
let job: Job;
beforeAll(async () => {
  server = await startServer();
  // `bytes` prints "x\n" over and over: 1,500,000 lines, around gemini's JSON events.
  const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "gemini", prompt: `bytes ${BYTES}`, workdir: path.join(server.root, "w") });
  expect(launched.status).toBe(201);
  [job] = (await server.services.waits.waitFor([launched.body.id], 120_000)) as [Job];
  expect(job.status).toBe("succeeded");
}, 150_000);
afterAll(() => server.close());

describe("a job of 3,000,000 bytes of short lines", () => {
  test("its Readable view reads every line, page by page", async () => {
    let lines = 0;
    let pages = 0;
    for (let cursor = 0; ; pages++) {
      const page = await api<ReadablePage>(server, "GET", `/api/jobs/${job.id}/readable?cursor=${cursor}&limit=${LIMIT}`);
      expect(page.status).toBe(200);
      lines += page.body.events.filter((e) => e.type === "output" && e.text === "x").length;
      if (page.body.complete) break;
      expect(page.body.cursor).toBeGreaterThan(cursor);
      cursor = page.body.cursor;
    }
    expect(lines).toBe(BYTES / 2);
    expect(pages).toBeGreaterThan(1);
  });

  test("its raw output has every line", async () => {
    let text = "";
    let lines = 0;
    for (let cursor = 0; ; ) {
      const page = await api<OutputPage>(server, "GET", `/api/jobs/${job.id}/output?cursor=${cursor}&limit=${LIMIT}`);
      expect(page.status).toBe(200);
      text += page.body.chunks
        .filter((c) => c.stream === "out")
        .map((c) => c.text)
        .join("");
      const parts = text.split("\n");
      text = parts.pop() ?? "";
      lines += parts.filter((l) => l === "x").length;
      if (page.body.complete) break;
      cursor = page.body.cursor;
    }
    expect(lines).toBe(BYTES / 2);
    expect(job.outputBytes).toBeGreaterThan(BYTES);
  });
});
