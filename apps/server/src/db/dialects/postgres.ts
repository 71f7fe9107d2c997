// What PostgreSQL does its own way, for the repositories (../dialect.ts). Calls run side by side on
// a pool of connections, so what SQLite gets from running one call at a time is asked for here:
// advisory locks, row locks, and numbers that commit in the order they were drawn.
import { is, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { PgTransaction } from "drizzle-orm/pg-core";
import type { QueryResult } from "pg";
import type { Channel, ColumnType, Db, Dialect, OrderedIdentity, Preparable, Tables } from "../dialect.js";
import type { PgExecutor } from "../pg/client.js";
import { AGENT_CLAIMS, inOrder, ORDERED } from "../pg/in-order.js";
import { ANSWER_CHANNEL, CANCEL_CHANNEL, JOB_CHANNEL, QUEUE_CHANNEL, REQUEST_CHANNEL } from "../pg/job-changes.js";
import { withoutNul } from "../pg/nul.js";
import * as tables from "../pg/schema.js";
import { createPgJobPage } from "./postgres-job-list.js";

const CHANNELS: Record<Channel, string> = {
  queue: QUEUE_CHANNEL,
  cancel: CANCEL_CHANNEL,
  request: REQUEST_CHANNEL,
  answer: ANSWER_CHANNEL,
  job: JOB_CHANNEL,
};
const ORDERED_KEYS: Record<OrderedIdentity, number> = ORDERED;
const LOCKS = { agentClaims: AGENT_CLAIMS } as const;
const ARRAY_TYPES: Record<ColumnType, string> = { text: "text[]", bigint: "bigint[]", float8: "float8[]" };

/** The PostgreSQL dialect on `db`: the pool, or a transaction (a savepoint when nested) the registry opened. */
export function postgresDialect(db: PgExecutor): Dialect {
  const builder = db as unknown as Db;
  const jobPage = createPgJobPage(db);
  const dialect: Dialect = {
    db: builder,
    tables: tables as Tables,
    inTransaction: is(db, PgTransaction),
    changes: (result) => (result as QueryResult).rowCount ?? 0,
    rows: async <T>(query: SQL) => (await db.execute(query)).rows as T[],
    run: (query) => db.execute(query),
    prepare<R>(build: (db: Db) => Preparable<R>) {
      // Built on first use, once for this dialect's executor (the pool, or one transaction): drizzle
      // then only fills in the parameters (building a statement cost the runner more than sending
      // it). Unnamed, so PostgreSQL still parses it at each run, as behind a transaction-mode
      // PgBouncer it must.
      let statement: ReturnType<Preparable<R>["prepare"]> | undefined;
      return (params) => {
        statement ??= build(builder).prepare("");
        return statement.execute(params);
      };
    },
    // Its own transaction (a savepoint inside the registry's): the locks taken in it are held until it is stored.
    atomic: (fn) => db.transaction((tx) => fn(postgresDialect(tx))),
    inOrder: (identity, insert) => inOrder(db, ORDERED_KEYS[identity], (tx) => insert(postgresDialect(tx))),
    async lock(name, key) {
      await db.execute(sql`select pg_advisory_xact_lock(${LOCKS[name]}, hashtext(${key}))`);
    },
    skipLocked: (query) =>
      (query as { for(strength: "update", config: { skipLocked: true }): unknown }).for("update", { skipLocked: true }) as typeof query,
    // Inside a transaction PostgreSQL sends it at commit (never on rollback), and a payload told twice there once.
    async notify(channel, payload) {
      await db.execute(sql`select pg_notify(${CHANNELS[channel]}, ${payload})`);
    },
    /**
     * A PostgreSQL database's own collation follows its locale ("a" < "B" < "é" under en_US, where
     * SQLite has "B" < "a" < "é"), so every ordering or range of text says this.
     */
    bytewise: (text) => sql`${text} collate "C"`,
    jsonText: (column, key) => sql<string | null>`(${column} ->> ${key})`,
    /**
     * PostgreSQL refuses U+0000 in text and in jsonb strings (SQLite keeps it), so a value that comes
     * from outside would fail its whole statement; it is stored with U+FFFD in its place (nul.ts).
     */
    storable: withoutNul,
    // PostgreSQL counts in int8 and sums bigints as numeric, which drizzle hands out as strings.
    wholeNumber: (value) => sql<number>`${value}`.mapWith(Number),
    /**
     * PostgreSQL's sum of double precision adds them one by one (ten $0.10 jobs: 0.9999999999999999,
     * and a $1 budget not spent). Here each value is added exactly as numeric, from the shortest text
     * that reads back as it, and the total rounded once.
     */
    sumOfDollars: (value) => sql<number | null>`sum((${value})::text::numeric)::float8`,
    /**
     * The Corral server's zone, not the PostgreSQL server's. It is written into the statement, not
     * passed as a parameter, so a grouped and a selected expression are the same text, as PostgreSQL requires.
     */
    localDay(ms: SQLWrapper) {
      const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
      return sql<string>`to_char(to_timestamp(${ms} / 1000) at time zone ${sql.raw(`'${zone.replaceAll("'", "''")}'`)}, 'YYYY-MM-DD')`;
    },
    // One array parameter however many values; = any() is an index condition like in ().
    oneOf: (column, values) => sql`${column} = any(${sql.param([...values])}::text[])`,
    // One array per column: PostgreSQL takes at most 65,535 parameters a statement.
    rowSource(columns, rows) {
      const names = Object.keys(columns);
      const arrays = Object.values(columns).map((type, i) => sql`${sql.param(rows.map((row) => row[i] ?? null))}::${sql.raw(ARRAY_TYPES[type])}`);
      return sql`(select * from unnest(${sql.join(arrays, sql`, `)}) as rows(${sql.join(
        names.map((n) => sql.identifier(n)),
        sql`, `,
      )}))`;
    },
    jobPage,
  };
  return dialect;
}
