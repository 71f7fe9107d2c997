import { and, asc, eq, isNotNull, isNull, or, sql, type SQL } from "drizzle-orm";
import type { CostGroupKey } from "@corral/shared";
import type { Async } from "../../async.js";
import type { CostFilter, CostSums, createCostsRepo } from "../../repos/costs.js";
import type { PgExecutor } from "../client.js";
import { budgets, jobs, priceOverrides } from "../schema.js";
import { bytewise, lastOfEach, stored } from "./sql.js";

const tokens = sql`coalesce(${jobs.inputTokens}, 0) + coalesce(${jobs.outputTokens}, 0)`;
const unpriced = sql`${jobs.costUsd} is null and ${tokens} > 0`;
/**
 * A count or a sum of integers, as a number. PostgreSQL counts in int8 and sums bigints as numeric,
 * which drizzle hands out as strings where SQLite gives integers.
 */
const whole = (value: SQL) => sql<number>`${value}`.mapWith(Number);
const sumOfInts = (value: SQL) => whole(sql`coalesce(sum(${value}), 0)`);

/**
 * A sum of costs as SQLite gives it. SQLite adds floating-point values with a compensated sum (ten
 * $0.10 jobs cost $1); PostgreSQL's sum of double precision adds them one by one (0.9999999999999999,
 * and a $1 budget not spent). Here each value is added exactly as numeric, from the shortest text
 * that reads back as it, and the total rounded once. A sum of nothing is null, as in SQLite.
 */
const sumOfDollars = (value: SQL) => sql<number | null>`sum((${value})::text::numeric)::float8`;

const sums = {
  jobs: whole(sql`count(*)`),
  inputTokens: sumOfInts(sql`${jobs.inputTokens}`),
  outputTokens: sumOfInts(sql`${jobs.outputTokens}`),
  cachedInputTokens: sumOfInts(sql`${jobs.cachedInputTokens}`),
  costUsd: sumOfDollars(sql`${jobs.costUsd}`),
  reportedUsd: sql<number>`coalesce(${sumOfDollars(sql`case when ${jobs.costSource} = 'reported' then ${jobs.costUsd} end`)}, 0)`,
  estimatedUsd: sql<number>`coalesce(${sumOfDollars(sql`case when ${jobs.costSource} = 'estimated' then ${jobs.costUsd} end`)}, 0)`,
  pricedJobs: whole(sql`count(${jobs.costUsd})`),
  unpricedJobs: sumOfInts(sql`case when ${unpriced} then 1 else 0 end`),
  unpricedInputTokens: sumOfInts(sql`case when ${unpriced} then coalesce(${jobs.inputTokens}, 0) else 0 end`),
  unpricedOutputTokens: sumOfInts(sql`case when ${unpriced} then coalesce(${jobs.outputTokens}, 0) else 0 end`),
  noUsageJobs: sumOfInts(sql`case when ${jobs.costUsd} is null and ${tokens} = 0 then 1 else 0 end`),
};

/**
 * Group columns; a day is the Corral server's local calendar day, as budgets count it (SQLite's
 * 'localtime'), not the PostgreSQL server's. The zone is written into the statement, not passed as
 * a parameter, so the grouped and selected expressions are the same text, as PostgreSQL requires.
 */
function groupColumns(): Record<CostGroupKey, SQL> {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  return {
    provider: sql`${jobs.provider}`,
    model: sql`coalesce(${jobs.usageModel}, ${jobs.model})`,
    agent: sql`${jobs.agent}`,
    day: sql`to_char(to_timestamp(${jobs.createdAt} / 1000) at time zone ${sql.raw(`'${zone.replaceAll("'", "''")}'`)}, 'YYYY-MM-DD')`,
  };
}

function where(filter: CostFilter): SQL | undefined {
  const parts: SQL[] = [sql`${jobs.createdAt} >= ${filter.from}`, sql`${jobs.createdAt} < ${filter.to}`];
  if (filter.provider) parts.push(eq(jobs.provider, filter.provider));
  if (filter.agent) parts.push(eq(jobs.agent, filter.agent));
  return and(...parts);
}

/** Budget ids are PostgreSQL integers: any other number names no budget, as in SQLite, rather than failing the statement. */
const isBudgetId = (id: number) => Number.isInteger(id) && id >= -(2 ** 31) && id < 2 ** 31;

export function createPgCostsRepo(db: PgExecutor): Async<ReturnType<typeof createCostsRepo>> {
  const budgetOrder = [asc(bytewise(budgets.provider)), asc(bytewise(budgets.period))];
  return {
    async overrides() {
      return db
        .select()
        .from(priceOverrides)
        .orderBy(asc(bytewise(priceOverrides.provider)), asc(bytewise(priceOverrides.model)));
    },
    async upsertOverride(row) {
      return stored(
        await db
          .insert(priceOverrides)
          .values(row)
          .onConflictDoUpdate({ target: [priceOverrides.provider, priceOverrides.model], set: row })
          .returning(),
      );
    },
    async deleteOverride(provider, model) {
      const result = await db.delete(priceOverrides).where(and(eq(priceOverrides.provider, provider), eq(priceOverrides.model, model)));
      return (result.rowCount ?? 0) > 0;
    },

    async budgets(provider) {
      const query = db.select().from(budgets);
      return (provider ? query.where(eq(budgets.provider, provider)) : query).orderBy(...budgetOrder);
    },
    async budget(id) {
      if (!isBudgetId(id)) return undefined;
      const [row] = await db.select().from(budgets).where(eq(budgets.id, id));
      return row;
    },
    async findBudget(provider, period) {
      const [row] = await db
        .select()
        .from(budgets)
        .where(and(eq(budgets.provider, provider), eq(budgets.period, period)));
      return row;
    },
    async insertBudget(row) {
      return stored(await db.insert(budgets).values(row).returning());
    },
    async updateBudget(id, patch) {
      if (!isBudgetId(id)) return undefined;
      const [row] = await db.update(budgets).set(patch).where(eq(budgets.id, id)).returning();
      return row;
    },
    async deleteBudget(id) {
      if (!isBudgetId(id)) return false;
      return ((await db.delete(budgets).where(eq(budgets.id, id))).rowCount ?? 0) > 0;
    },

    /** Totals over the filter, grouped by the given keys (none: one row), in SQLite's order of the keys (nulls first). */
    async aggregate(filter, groupBy) {
      const columns = groupColumns();
      const keys = groupBy.map((k) => columns[k]);
      const query = db
        .select({ ...Object.fromEntries(groupBy.map((k) => [k, columns[k]])), ...sums })
        .from(jobs)
        .where(where(filter));
      const rows = await (keys.length ? query.groupBy(...keys).orderBy(...keys.map((k) => sql`${bytewise(k)} nulls first`)) : query);
      return rows as Array<CostSums & Partial<Record<CostGroupKey, string | null>>>;
    },

    /** Jobs whose cost is not the CLI's own and may change with prices, in the order they were added (SQLite's table order). */
    async repriceable() {
      return db
        .select({
          id: jobs.id,
          agent: jobs.agent,
          provider: jobs.provider,
          model: jobs.model,
          usageModel: jobs.usageModel,
          inputTokens: jobs.inputTokens,
          outputTokens: jobs.outputTokens,
          cachedInputTokens: jobs.cachedInputTokens,
          costUsd: jobs.costUsd,
          costSource: jobs.costSource,
          attempt: jobs.attempt,
        })
        .from(jobs)
        .where(and(or(isNull(jobs.costSource), eq(jobs.costSource, "estimated")), or(isNotNull(jobs.inputTokens), isNotNull(jobs.outputTokens))))
        .orderBy(asc(jobs.seq));
    },
    /** Every change in one statement (all or none); a job listed twice gets its last. */
    async setCosts(changes) {
      const latest = lastOfEach(changes, (c) => c.id);
      if (!latest.length) return;
      const column = <T>(pick: (c: (typeof latest)[number]) => T) => sql.param(latest.map(pick));
      await db.execute(sql`
        update ${jobs} set cost_usd = v.cost_usd, cost_source = v.cost_source
        from unnest(${column((c) => c.id)}::text[], ${column((c) => c.costUsd)}::float8[], ${column((c) => c.costSource)}::text[])
          as v(id, cost_usd, cost_source)
        where ${jobs.id} = v.id`);
    },
  };
}
