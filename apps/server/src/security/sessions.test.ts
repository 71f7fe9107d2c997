import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, expect, test } from "vitest";
import { openDb, type DbHandle } from "../db/client.js";
import { createSessionsRepo } from "../db/repos/sessions.js";
import { SessionService } from "./sessions.js";

const DAY = 24 * 3600 * 1000;
let handle: DbHandle | null = null;
let dir = "";
afterEach(() => {
  handle?.close();
  rmSync(dir, { recursive: true, force: true });
});

function service(now: () => number): SessionService {
  dir = mkdtempSync(path.join(os.tmpdir(), "corral-sessions-"));
  handle = openDb(path.join(dir, "corral.db"));
  return new SessionService(createSessionsRepo(handle.db), dir, 30 * DAY, now);
}

test("a session lasts its TTL after its last use, then opens nothing", () => {
  let now = 1_000_000;
  const sessions = service(() => now);
  const { secret } = sessions.create("ua");
  expect(sessions.verify(secret)?.renewed).toBe(false); // just created
  now += 20 * DAY;
  expect(sessions.verify(secret)?.renewed).toBe(true); // used: 30 more days from here
  expect(sessions.verify(secret)?.renewed).toBe(false); // written at most once a minute
  now += 29 * DAY;
  expect(sessions.verify(secret)).not.toBeNull();
  now += 31 * DAY;
  expect(sessions.verify(secret)).toBeNull();
  expect(sessions.list(null)).toEqual([]);
});

test("unknown secrets open nothing, and user agents are stored without control characters", () => {
  const sessions = service(Date.now);
  const { id } = sessions.create(`evil\u001b[31m\nagent${"x".repeat(1000)}`);
  expect(sessions.verify("not-a-secret")).toBeNull();
  const [listed] = sessions.list(id);
  expect(listed?.current).toBe(true);
  expect(listed?.userAgent).toMatch(/^evil\[31magentx+$/);
  expect(listed?.userAgent.length).toBe(300);
});

test("the number of sessions is bounded: the least recently seen go first", () => {
  let now = 0;
  const sessions = service(() => now);
  const first = sessions.create("first");
  for (let i = 0; i < 250; i++) {
    now += 1000;
    sessions.create(`b${i}`);
  }
  expect(sessions.list(null).length).toBe(200);
  expect(sessions.verify(first.secret)).toBeNull();
});
