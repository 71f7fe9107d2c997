import { getTableConfig, type PgTable } from "drizzle-orm/pg-core";
import { expect, test } from "vitest";
import { copiedTables } from "./copy-to-postgres.js";
import * as pgSchema from "./pg/schema.js";

const isPgTable = (v: unknown): v is PgTable => {
  try {
    return getTableConfig(v as PgTable).name !== undefined;
  } catch {
    return false;
  }
};

test("pnpm registry:copy copies every table of the registry, parents before the tables that refer to them", () => {
  const tables = Object.values(pgSchema).filter(isPgTable);
  expect([...copiedTables()].sort()).toEqual(tables.map((t) => getTableConfig(t).name).sort());
  const order = copiedTables();
  for (const table of tables) {
    const { name, foreignKeys } = getTableConfig(table);
    for (const key of foreignKeys) {
      const parent = getTableConfig(key.reference().foreignTable).name;
      expect(order.indexOf(parent), `${parent} before ${name}`).toBeLessThan(order.indexOf(name));
    }
  }
});
