// The SQLite registry's own behaviour: transactions and calls from outside them taking turns on
// its one connection. What every dialect must answer is in registry-contract/.
import { afterEach, expect, test } from "vitest";
import type { Registry } from "./registry.js";
import { sqliteRepos, type TestRegistry } from "./registry-contract/dialects.js";
import { agentRow as agent, jobRow } from "./registry-contract/rows.js";

let registry: TestRegistry | null = null;
afterEach(async () => {
  await registry?.close();
  registry = null;
});

async function open(): Promise<Registry> {
  registry = await sqliteRepos();
  return registry;
}

/** A promise and the function that settles it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

test("a transaction stores all of its writes or none", async () => {
  const registry = await open();
  await registry.transaction(async (tx) => {
    await tx.agents.insert(agent("kept"));
    await tx.agents.insert(agent("kept-too"));
  });
  await expect(
    registry.transaction(async (tx) => {
      await tx.agents.insert(agent("dropped"));
      throw new Error("roll back");
    }),
  ).rejects.toThrow("roll back");
  expect((await registry.agents.list()).map((a) => a.name)).toEqual(["kept", "kept-too"]);
});

test("a call from outside waits until the open transaction has ended, and is no part of it", async () => {
  const registry = await open();
  const hold = gate();
  const entered = gate();
  const inside = registry.transaction(async (tx) => {
    await tx.agents.insert(agent("inside"));
    entered.open();
    await hold.opened;
    // The outside write was asked for meanwhile: it has not happened.
    expect(await tx.agents.get("outside")).toBeUndefined();
    throw new Error("roll back");
  });
  await entered.opened;
  let outsideDone = false;
  const outside = registry.agents.insert(agent("outside")).then(() => {
    outsideDone = true;
  });
  // However long the transaction stays open, the outside call waits for it.
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
  expect(outsideDone).toBe(false);
  hold.open();
  await expect(inside).rejects.toThrow("roll back");
  await outside;
  // The rollback took the transaction's write, not the one made from outside.
  expect((await registry.agents.list()).map((a) => a.name)).toEqual(["outside"]);
});

test("a call from outside already under way when a transaction is asked for ends first: none of its statements joins the transaction", async () => {
  const registry = await open();
  await registry.agents.insert(agent("gpu-worker", { runnerLabel: "gpu", maxConcurrent: 2 }));
  await registry.agents.insert(agent("local"));
  await registry.runners.register({
    id: "r1",
    name: "r1",
    labels: ["gpu"],
    hostname: "h",
    version: "0",
    startedAt: 1,
    heartbeatAt: 1,
    stoppedAt: null,
  });
  await registry.jobs.insert(jobRow("job1", { agent: "gpu-worker", status: "queued" }));
  // A claim reads the queue, counts the agent's jobs, then takes one: several statements with awaits between them.
  const claim = registry.runners.claim("r1", ["gpu"]);
  // Asked for while the claim is under way, and rolled back.
  const rolledBack = registry.transaction(async (tx) => {
    await tx.agents.update("local", { description: "changed" });
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    throw new Error("roll back");
  });
  expect((await claim).job?.runner).toBe("r1");
  await expect(rolledBack).rejects.toThrow("roll back");
  // The claim's write is kept, the transaction's is not.
  expect((await registry.jobs.get("job1"))?.runner).toBe("r1");
  expect((await registry.agents.get("local"))?.description).toBe("");
});

test("transactions run one at a time, in the order they were asked for", async () => {
  const registry = await open();
  const order: string[] = [];
  const hold = gate();
  const first = registry.transaction(async (tx) => {
    order.push("first begins");
    await hold.opened;
    await tx.agents.insert(agent("first"));
    order.push("first ends");
  });
  const second = registry.transaction(async (tx) => {
    order.push("second begins");
    // What the first stored is committed before the second reads.
    expect(await tx.agents.get("first")).toBeDefined();
    order.push("second ends");
  });
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
  hold.open();
  await Promise.all([first, second]);
  expect(order).toEqual(["first begins", "first ends", "second begins", "second ends"]);
});

test("a call through a transaction that has ended is refused rather than run outside it", async () => {
  const registry = await open();
  let kept: Parameters<Parameters<Registry["transaction"]>[0]>[0] | null = null;
  await registry.transaction(async (tx) => {
    kept = tx;
  });
  await expect((kept as unknown as Registry).agents.insert(agent("late"))).rejects.toThrow(/transaction that has ended/);
  expect(await registry.agents.get("late")).toBeUndefined();
});

test("a repository's own transaction (job files, costs) joins the one it is called in", async () => {
  const registry = await open();
  await registry.agents.insert(agent("worker"));
  await expect(
    registry.transaction(async (tx) => {
      await tx.jobs.insert(jobRow("job1", { status: "queued" }));
      await tx.jobFiles.upsert([{ jobId: "job1", path: "a.txt", change: "created", size: 1, at: 1 }]);
      throw new Error("roll back");
    }),
  ).rejects.toThrow("roll back");
  expect(await registry.jobs.get("job1")).toBeUndefined();
  expect(await registry.jobFiles.list("job1")).toEqual([]);
});
