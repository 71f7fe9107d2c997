import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { usePostgres } from "../../../test/postgres.js";
import { pgRegistryAt, type TestRegistry } from "../../../test/test-registry.js";
import { agentRow, jobRow } from "../registry-contract/rows.js";
import { openPgDb } from "./client.js";
import { createPgRegistry } from "./registry.js";

const postgres = usePostgres();

describe.skipIf(!postgres.available)("the PostgreSQL registry's transactions", () => {
  const opened: Pick<TestRegistry, "close">[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((r) => r.close()));
  });

  it("run one at a time, also across processes: a check and the write it decides are never split by another transaction", async () => {
    const url = await postgres.database();
    // Two registries on one database, as a server and a second process (a runner) have.
    const [a, b] = [await pgRegistryAt(url), await pgRegistryAt(url)];
    opened.push(a, b);
    await a.agents.insert(agentRow("worker"));
    await a.insertJobs([jobRow("job000000001", { status: "queued" })]);
    const startIfQueued = (registry: TestRegistry, status: "running" | "cancelled", pause: number) =>
      registry.transaction(async (tx) => {
        if ((await tx.jobs.get("job000000001"))?.status !== "queued") return false;
        // At READ COMMITTED, the other transaction would read "queued" here too and both would write.
        await sleep(pause);
        await tx.jobs.update("job000000001", { status });
        return true;
      });
    const won = await Promise.all([startIfQueued(a, "running", 150), sleep(20).then(() => startIfQueued(b, "cancelled", 0))]);
    expect(won).toEqual([true, false]);
    expect((await b.jobs.get("job000000001"))?.status).toBe("running");
  });

  it("queue in this process before taking a connection: waiting transactions leave the pool to other calls", async () => {
    const registry = await pgRegistryAt(await postgres.database());
    opened.push(registry);
    let release = () => {};
    const held = registry.transaction(() => new Promise<void>((resolve) => (release = resolve)));
    await sleep(20);
    // More transactions than the pool has connections (10), all waiting for the first.
    const waiting = Array.from({ length: 30 }, (_, i) => registry.transaction((tx) => tx.audit.list({ limit: 1, offset: i })));
    // A call outside any transaction still gets a connection at once.
    expect(await registry.jobs.get("nothing")).toBeUndefined();
    release();
    await held;
    expect(await Promise.all(waiting)).toHaveLength(30);
  });

  it("keep agents as this process last read them unless told not to (a runner): then another process's change is read at once", async () => {
    const url = await postgres.database();
    // The server: it writes agents (and keeps them).
    const server = await pgRegistryAt(url);
    opened.push(server);
    await server.agents.insert(agentRow("worker", { maxConcurrent: 1 }));
    const [caching, reading] = [
      createPgRegistry(await openPgDb(url, { schema: "check" })),
      createPgRegistry(await openPgDb(url, { schema: "check" }), { cacheAgents: false }),
    ];
    opened.push(caching, reading);
    for (const registry of [caching, reading]) expect((await registry.agents.get("worker"))?.maxConcurrent).toBe(1);

    await server.agents.update("worker", { maxConcurrent: 2 });
    expect((await reading.agents.get("worker"))?.maxConcurrent).toBe(2);
    // The cache holds the row it read until this process writes an agent or opens a transaction.
    expect((await caching.agents.get("worker"))?.maxConcurrent).toBe(1);
    await caching.transaction(async () => {});
    expect((await caching.agents.get("worker"))?.maxConcurrent).toBe(2);

    await server.agents.delete("worker");
    expect(await reading.agents.get("worker")).toBeUndefined();
  });
});
