import path from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { isFinalStatus } from "@corral/shared";
import { sleep, startServer, type TestServer } from "./helpers.js";
import { WsClient } from "./ws-client.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

test("1,000 jobs queued at concurrency 16 with a WebSocket subscriber: every job accounted for", async () => {
  // A cheap worker, so the engine is what is measured, not a Node start per job.
  await server.services.agents.create({ name: "echo", kind: "command", command: "echo", maxConcurrent: 16 });
  const ws = await WsClient.open(server);
  ws.send({ type: "subscribe_jobs" });
  await ws.waitFor("subscribed");
  const workdir = path.join(server.root, "load");
  const ids = await Promise.all(
    Array.from(
      { length: 1000 },
      async (_, i) => (await server.services.launches.launch("echo", { prompt: `job ${i}`, workdir, sharedWorkdir: true }, "rest")).id,
    ),
  );
  const ended = await server.services.waits.waitFor(ids, 240_000);
  expect(ended.filter((j) => j.status === "succeeded")).toHaveLength(1000);
  // The subscriber heard every job end, and never more than 16 ran at once.
  const finals = await (async () => {
    for (;;) {
      const seen = new Set(
        ws
          .of("job")
          .filter((m) => isFinalStatus(m.job.status))
          .map((m) => m.job.id),
      );
      if (seen.size >= 1000) return seen;
      await sleep(50);
    }
  })();
  expect([...finals].sort()).toEqual([...ids].sort());
  let running = 0;
  let peak = 0;
  const state = new Map<string, string>();
  for (const m of ws.of("job")) {
    const before = state.get(m.job.id);
    if (before === m.job.status) continue;
    if (m.job.status === "running") running++;
    if (before === "running") running--;
    state.set(m.job.id, m.job.status);
    peak = Math.max(peak, running);
  }
  expect(peak).toBeLessThanOrEqual(16);
  await ws.close();
}, 300_000);
