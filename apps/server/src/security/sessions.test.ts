import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, expect, test } from "vitest";
import { openDb } from "../db/client.js";
import type { Registry } from "../db/registry.js";
import { createSqliteRegistry } from "../db/sqlite-registry.js";
import { SessionService } from "./sessions.js";

const DAY = 24 * 3600 * 1000;
let registry: Registry | null = null;
let dir = "";
afterEach(async () => {
  await registry?.close();
  registry = null;
  rmSync(dir, { recursive: true, force: true });
});

function service(now: () => number): SessionService {
  dir = mkdtempSync(path.join(os.tmpdir(), "corral-sessions-"));
  registry = createSqliteRegistry(openDb(path.join(dir, "corral.db")));
  return new SessionService(registry, dir, 30 * DAY, now);
}

test("a session lasts its TTL after its last use, then opens nothing", async () => {
  let now = 1_000_000;
  const sessions = service(() => now);
  const { secret } = await sessions.create("ua");
  expect((await sessions.verify(secret))?.renewed).toBe(false); // just created
  now += 20 * DAY;
  expect((await sessions.verify(secret))?.renewed).toBe(true); // used: 30 more days from here
  expect((await sessions.verify(secret))?.renewed).toBe(false); // written at most once a minute
  now += 29 * DAY;
  expect(await sessions.verify(secret)).not.toBeNull();
  now += 31 * DAY;
  expect(await sessions.verify(secret)).toBeNull();
  expect(await sessions.list(null)).toEqual([]);
});

test("unknown secrets open nothing, and user agents are stored without control characters", async () => {
  const sessions = service(Date.now);
  const { id } = await sessions.create(`evil\u001b[31m\nagent${"x".repeat(1000)}`);
  expect(await sessions.verify("not-a-secret")).toBeNull();
  const [listed] = await sessions.list(id);
  expect(listed?.current).toBe(true);
  expect(listed?.userAgent).toMatch(/^evil\[31magentx+$/);
  expect(listed?.userAgent.length).toBe(300);
});

test("the number of sessions is bounded: the least recently seen go first", async () => {
  let now = 0;
  const sessions = service(() => now);
  const first = await sessions.create("first");
  for (let i = 0; i < 250; i++) {
    now += 1000;
    await sessions.create(`b${i}`);
  }
  expect((await sessions.list(null)).length).toBe(200);
  expect(await sessions.verify(first.secret)).toBeNull();
});
