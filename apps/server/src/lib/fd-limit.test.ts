import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, expect, test } from "vitest";
import { loadConfig, ConfigError } from "../config.js";
import { openFilesLimit } from "./fd-limit.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "corral-fd-limit-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const limitsFile = (openFiles: string) => {
  const file = path.join(dir, `limits-${openFiles}`);
  writeFileSync(
    file,
    `Limit                     Soft Limit           Hard Limit           Units     \nMax cpu time              unlimited            unlimited            seconds   \nMax open files            ${openFiles}                 524288               files     \n`,
  );
  return file;
};

test("the soft limit of open files is read from /proc/self/limits; unlimited or unreadable is none", () => {
  expect(openFilesLimit(limitsFile("1024"))).toBe(1024);
  expect(openFilesLimit(limitsFile("unlimited"))).toBeNull();
  expect(openFilesLimit(path.join(dir, "missing"))).toBeNull();
});

test.skipIf(openFilesLimit() === null)("connections stay well under this process's limit; a setting past it is refused naming ulimit -n", () => {
  const limit = openFilesLimit() ?? 0;
  const config = loadConfig({ HOME: dir });
  expect(config.maxConnections).toBeLessThanOrEqual(Math.floor(limit / 2));
  expect(loadConfig({ HOME: dir, CORRAL_MAX_CONNECTIONS: "100" }).maxConnections).toBe(100);
  const tooMany = () => loadConfig({ HOME: dir, CORRAL_MAX_CONNECTIONS: String(limit) });
  expect(tooMany).toThrow(ConfigError);
  expect(tooMany).toThrow(new RegExp(`CORRAL_MAX_CONNECTIONS: ${limit} would leave too few file descriptors .* may open ${limit} \\(ulimit -n\\)`));
});
