// The server restarts (stopped, or killed with SIGKILL) while a runner's jobs run: they run on, and
// the server that comes back on the same registry and data dir has all their output, once each, and
// hears them end. Real server and runner processes, the test run's PostgreSQL.
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import type { Agent, Job, JobAttempt, OutputPage } from "@corral/shared";
import { api, tempDir, until } from "./helpers.js";
import { usePostgres } from "./postgres.js";
import { startRunnerProcess } from "./runner-process.js";
import { startServerProcess } from "./server-process.js";
import { pgRegistryAt } from "./test-registry.js";
import { WsClient } from "./ws-client.js";

const postgres = usePostgres();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const TOKEN = "test-token-0123456789";

/** The server as its own process on `url`, with its data dir in `root`; what api() and WsClient need to reach it. */
async function serverProcess(root: string, url: string) {
  const started = await startServerProcess(root, { CORRAL_DATABASE_URL: url, CORRAL_TOKEN: TOKEN });
  cleanups.push(() => started.stop());
  return { process: started, url: `http://127.0.0.1:${started.port}`, auth: { authorization: `Bearer ${TOKEN}` } };
}

/** Its whole output log through REST, page by page. */
async function restText(server: { url: string; auth: { authorization: string } }, id: string): Promise<string> {
  let cursor = 0;
  let text = "";
  for (;;) {
    const { body } = await api<OutputPage>(server, "GET", `/api/jobs/${id}/output?cursor=${cursor}`);
    text += body.chunks.map((c) => c.text).join("");
    if (body.cursor === cursor) return text;
    cursor = body.cursor;
  }
}

const LINES = 60;
const expected = Array.from({ length: LINES }, (_, i) => `${i + 1}\n`).join("");

describe.skipIf(!postgres.available)("a server restart while runners' jobs run", () => {
  test.each([
    ["SIGTERM", "while they run"],
    ["SIGKILL", "while they run"],
    // Their output stored while the server was down comes with no NOTIFY: a stream copies it first.
    ["SIGTERM", "after they ended"],
  ] as const)(
    "after %s the server comes back (%s) with every job's output once and hears each end",
    async (signal, when) => {
      const root = tempDir();
      const url = await postgres.database();
      const first = await serverProcess(root, url);
      const agent = await api<Agent>(first, "POST", "/api/agents", {
        name: "counter",
        kind: "command",
        command: "/bin/sh",
        args: ["-c", "{prompt}"],
        runnerLabel: "gpu",
        maxConcurrent: 4,
      });
      expect(agent.status).toBe(201);
      const box = await startRunnerProcess(root, { CORRAL_DATABASE_URL: url, CORRAL_RUNNER_LABELS: "gpu" });
      cleanups.push(() => box.stop("SIGKILL"));
      // About 6 s each: under way when the server goes, still running when it is back.
      const prompt = `i=1; while [ $i -le ${LINES} ]; do echo $i; i=$((i+1)); sleep 0.1; done`;
      const ids: string[] = [];
      for (const n of [1, 2, 3]) {
        const launched = await api<Job>(first, "POST", "/api/jobs", { agent: "counter", prompt, workdir: path.join(root, `w${n}`) });
        expect(launched.status).toBe(201);
        ids.push(launched.body.id);
      }
      for (const id of ids) await until(async () => ((await restText(first, id)).includes("3\n") ? true : undefined), 20_000, `output of ${id}`);

      // stop() sends SIGTERM, once: a second signal could mean more to a server that is stopping.
      if (signal === "SIGKILL") first.process.child.kill("SIGKILL");
      await first.process.stop();
      if (when === "after they ended") {
        const registry = await pgRegistryAt(url);
        await until(async () => ((await registry.jobs.withStatus(["queued", "running"])).length === 0 ? true : undefined), 30_000, "the jobs ended");
        await registry.close();
      }
      const second = await serverProcess(root, url);
      const clients = await Promise.all(ids.map(() => WsClient.open(second)));
      for (const client of clients) cleanups.push(() => client.close());
      for (const [i, id] of ids.entries()) clients[i]?.send({ type: "subscribe_job", jobId: id, cursor: 0 });

      for (const [i, id] of ids.entries()) {
        const client = clients[i] as WsClient;
        // Its end is heard: the stream's final status, after all its output.
        const end = await client.waitForEnd(id, 30_000);
        expect(end.job).toMatchObject({ status: "succeeded", runner: box.id });
        expect(client.text(id)).toBe(expected);
        expect(await restText(second, id)).toBe(expected);
        expect((await api<Job>(second, "GET", `/api/jobs/${id}`)).body).toMatchObject({ status: "succeeded", exitCode: 0, runner: box.id });
        const attempts = await api<{ attempts: JobAttempt[] }>(second, "GET", `/api/jobs/${id}/attempts`);
        expect(attempts.body.attempts).toMatchObject([{ attempt: 1, status: "succeeded" }]);
      }
    },
    90_000,
  );
});
