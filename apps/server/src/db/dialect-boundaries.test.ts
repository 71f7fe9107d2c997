// Each dialect's code stands alone: PostgreSQL's modules import nothing of SQLite's and SQLite's
// nothing of PostgreSQL's, so either can change (or be left out of a runner) without the other.
// What both use (registry.ts, dialect.ts, repos/) sits between them.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";

const DB = path.dirname(fileURLToPath(import.meta.url));
const IMPORT = /(?:^|[\s;}])(?:import|export)\s[^;]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

const postgres = (file: string) => file.startsWith("pg/") || file.startsWith("dialects/postgres");
const sqlite = (file: string) => ["schema.ts", "client.ts"].includes(file) || file.startsWith("sqlite-") || file.startsWith("dialects/sqlite");

function modules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return modules(full);
    return /\.ts$/.test(entry.name) && !/\.test\.ts$/.test(entry.name) ? [path.relative(DB, full)] : [];
  });
}

/** Each module's imports inside db/, as paths relative to db/. */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(DB, file), "utf8");
  return [...text.matchAll(IMPORT)]
    .map((m) => m[1] ?? m[2] ?? "")
    .filter((specifier) => specifier.startsWith("."))
    .map((specifier) => path.relative(DB, path.resolve(path.dirname(path.join(DB, file)), specifier)).replace(/\.js$/, ".ts"));
}

test("PostgreSQL's modules import none of SQLite's, and SQLite's none of PostgreSQL's", () => {
  const crossings = modules(DB).flatMap((file) => {
    const other = postgres(file) ? sqlite : sqlite(file) ? postgres : null;
    return other
      ? importsOf(file)
          .filter(other)
          .map((target) => `${file} → ${target}`)
      : [];
  });
  expect(crossings).toEqual([]);
  // The rule sees both sides: each has modules, and they import something.
  expect(modules(DB).filter(postgres).length).toBeGreaterThan(3);
  expect(modules(DB).filter(sqlite).length).toBeGreaterThan(3);
});

test("a crossing is seen", () => {
  expect(importsOf("dialects/sqlite.ts")).toContain("schema.ts");
  expect(importsOf("dialects/postgres.ts")).toContain("pg/schema.ts");
});
