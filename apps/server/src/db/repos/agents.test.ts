import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, expect, test } from "vitest";
import { openDb, type DbHandle } from "../client.js";
import { createAgentsRepo, type NewAgentRow } from "./agents.js";

let handle: DbHandle | null = null;
let dir = "";
afterEach(() => {
  handle?.close();
  handle = null;
  rmSync(dir, { recursive: true, force: true });
});

const agent = (name: string, maxConcurrent: number): NewAgentRow => ({
  name,
  kind: "command",
  provider: "local",
  workdir: "/tmp",
  timeoutS: 60,
  maxConcurrent,
  env: {},
  enabled: true,
  builtin: false,
  createdAt: 0,
  updatedAt: 0,
});

test("an agent looked up again sees every stored change at once, and never one that was rolled back", () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "corral-agents-"));
  handle = openDb(path.join(dir, "corral.db"));
  const repo = createAgentsRepo(handle.db);
  expect(repo.get("worker")).toBeUndefined();
  repo.insert(agent("worker", 1));
  expect(repo.get("worker")?.maxConcurrent).toBe(1);
  repo.update("worker", { maxConcurrent: 7 });
  expect(repo.get("worker")?.maxConcurrent).toBe(7);

  // Read inside a transaction that is then rolled back: what it saw is not what stays.
  const client = handle.db.$client;
  expect(() =>
    client.transaction(() => {
      repo.update("worker", { maxConcurrent: 99 });
      expect(repo.get("worker")?.maxConcurrent).toBe(99);
      throw new Error("roll back");
    })(),
  ).toThrow("roll back");
  expect(repo.get("worker")?.maxConcurrent).toBe(7);

  expect(repo.delete("worker")).toBe(true);
  expect(repo.get("worker")).toBeUndefined();
  repo.insertMissing([agent("worker", 3)]);
  expect(repo.get("worker")?.maxConcurrent).toBe(3);
});
