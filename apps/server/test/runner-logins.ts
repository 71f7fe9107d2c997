// Runners' own logins on the test run's PostgreSQL, made as docs/runners.md says: the
// grants of runner-role.sql, then `pnpm runner login <name> <labels>`'s statements, both run as
// the superuser. The test cluster trusts local logins, so the password printed is not needed.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { runnerLogin, runnerLoginStatements } from "../src/runner/login.js";

const grants = readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../src/runner/runner-role.sql"), "utf8");

/** `url` with another login (the test's PostgreSQL trusts local logins: no password). */
export function as(url: string, user: string): string {
  const other = new URL(url);
  other.username = user;
  other.password = "";
  return other.toString();
}

export async function query(url: string, text: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text, params);
  } finally {
    await client.end();
  }
}

/**
 * A login for runner `name` (made unique per call: roles belong to the whole cluster) allowed
 * `labels`, in the registry at `ownerUrl` (whose server has created its tables): its name and URL.
 */
export async function runnerLoginFor(ownerUrl: string, name: string, labels: string[]): Promise<{ name: string; url: string; role: string }> {
  await query(ownerUrl, grants);
  const login = runnerLogin(`${name}-${randomBytes(3).toString("hex")}`, labels.join(","));
  await query(ownerUrl, runnerLoginStatements(login));
  return { name: login.name, url: as(ownerUrl, login.role), role: login.role };
}
