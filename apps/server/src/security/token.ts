import { randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

/** `CORRAL_TOKEN`, else the one kept in the data dir, else a new one stored there with mode 0600. */
export function loadOrCreateToken(dataDir: string, configured: string | null): string {
  if (configured) return configured;
  const file = path.join(dataDir, "token");
  try {
    const stored = readFileSync(file, "utf8").trim();
    if (stored) return stored;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const token = randomBytes(24).toString("base64url");
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return token;
}

export function tokensMatch(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
