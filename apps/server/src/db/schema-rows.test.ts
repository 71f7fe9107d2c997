// The repositories are typed once, against PostgreSQL's table declarations, and the SQLite dialect
// hands its own tables in their place (dialects/sqlite.ts): that holds only while both schema files
// infer the same rows, to insert and to read, for every table. `pnpm typecheck` checks the types;
// the test checks both schemas declare the same tables.
import { expect, expectTypeOf, test } from "vitest";
import type { Tables } from "./dialect.js";
import * as pg from "./pg/schema.js";
import * as sqlite from "./schema.js";

type SqliteTables = typeof sqlite;
type TableName = keyof Tables & keyof SqliteTables & string;

const tableNames = (module: object) =>
  Object.entries(module)
    .filter(([, value]) => typeof value === "object" && value !== null && "$inferSelect" in value === false && Symbol.for("drizzle:Name") in value)
    .map(([name]) => name)
    .sort();

test("both schema files declare the same tables", () => {
  expect(tableNames(sqlite)).toEqual(tableNames(pg));
  expect(tableNames(sqlite).length).toBeGreaterThan(10);
});

/**
 * Every column alike but one: a job's seq, which SQLite's trigger numbers after the insert (a
 * nullable column, written by no one) and PostgreSQL's identity draws (never null, never given).
 * The repositories never write it (jobs.ts) and hand out SQLite's wider row type (registry.ts).
 */
type WithoutSeq<T> = { [K in keyof T]: K extends "jobs" ? Omit<T[K], "seq"> : T[K] };

test("every table infers the same rows in both dialects, to read and to insert", () => {
  type Rows<T> = WithoutSeq<{ [K in TableName]: T extends Record<K, { $inferSelect: infer R }> ? R : never }>;
  type Inserts<T> = WithoutSeq<{ [K in TableName]: T extends Record<K, { $inferInsert: infer R }> ? R : never }>;
  expectTypeOf<Rows<SqliteTables>>().toEqualTypeOf<Rows<Tables>>();
  expectTypeOf<Inserts<SqliteTables>>().toEqualTypeOf<Inserts<Tables>>();
  expectTypeOf<TableName>().toEqualTypeOf<keyof Tables & string>();
  expectTypeOf<Tables["jobs"]["$inferSelect"]["seq"]>().toExtend<SqliteTables["jobs"]["$inferSelect"]["seq"]>();
});
