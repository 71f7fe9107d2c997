import { randomBytes, timingSafeEqual } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ensurePrivateDir, makePrivate, PRIVATE_FILE_MODE } from "../lib/private-files.js";

/** `CORRAL_TOKEN`, else the one kept in the data dir, else a new one stored there with mode 0600. */
export function loadOrCreateToken(dataDir: string, configured: string | null): string {
  if (configured) return configured;
  const file = path.join(dataDir, "token");
  try {
    const stored = readFileSync(file, "utf8").trim();
    if (stored) {
      makePrivate(file);
      return stored;
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  ensurePrivateDir(dataDir);
  const token = randomBytes(24).toString("base64url");
  writeFileSync(file, `${token}\n`, { mode: PRIVATE_FILE_MODE });
  makePrivate(file);
  return token;
}

/** A constant-time comparison with `expected`, whose bytes are taken once (it runs on every request). */
export function tokenMatcher(expected: string): (given: string) => boolean {
  const b = Buffer.from(expected);
  return (given) => {
    const a = Buffer.from(given);
    return a.length === b.length && timingSafeEqual(a, b);
  };
}
