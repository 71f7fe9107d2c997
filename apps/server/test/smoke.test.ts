import { afterAll, beforeAll, expect, test } from "vitest";
import type { Job } from "@corral/shared";
import { api, startServer, until, type TestServer } from "./helpers.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

test("a job runs", async () => {
  const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "gemini", prompt: "write a.txt hi", workdir: `${server.root}/w` });
  expect(launched.status).toBe(201);
  const done = await until(async () => {
    const { body } = await api<Job>(server, "GET", `/api/jobs/${launched.body.id}`);
    return body.status === "succeeded" || body.status === "failed" ? body : undefined;
  });
  expect(done.status).toBe("succeeded");
});
