import { and, asc, eq, isNotNull, isNull, or, sql, type SQL } from "drizzle-orm";
import type { CostGroupKey } from "@corral/shared";
import type { Dialect } from "../dialect.js";
import type { CostFilter, CostSums, CostsRepo } from "../registry.js";
import { lastOfEach, stored } from "./rows.js";

/** Budget ids are integers that PostgreSQL can hold: any other number names no budget, rather than failing the statement. */
const isBudgetId = (id: number) => Number.isInteger(id) && id >= -(2 ** 31) && id < 2 ** 31;

type CostRow = CostSums & Partial<Record<CostGroupKey, string | null>>;

export function createCostsRepo(d: Dialect): CostsRepo {
  const { budgets, jobs, priceOverrides } = d.tables;
  const tokens = sql`coalesce(${jobs.inputTokens}, 0) + coalesce(${jobs.outputTokens}, 0)`;
  const unpriced = sql`${jobs.costUsd} is null and ${tokens} > 0`;
  const sumOfInts = (value: SQL) => d.wholeNumber(sql`coalesce(sum(${value}), 0)`);
  const sums = {
    jobs: d.wholeNumber(sql`count(*)`),
    inputTokens: sumOfInts(sql`${jobs.inputTokens}`),
    outputTokens: sumOfInts(sql`${jobs.outputTokens}`),
    cachedInputTokens: sumOfInts(sql`${jobs.cachedInputTokens}`),
    costUsd: d.sumOfDollars(sql`${jobs.costUsd}`),
    reportedUsd: sql<number>`coalesce(${d.sumOfDollars(sql`case when ${jobs.costSource} = 'reported' then ${jobs.costUsd} end`)}, 0)`,
    estimatedUsd: sql<number>`coalesce(${d.sumOfDollars(sql`case when ${jobs.costSource} = 'estimated' then ${jobs.costUsd} end`)}, 0)`,
    pricedJobs: d.wholeNumber(sql`count(${jobs.costUsd})`),
    unpricedJobs: sumOfInts(sql`case when ${unpriced} then 1 else 0 end`),
    unpricedInputTokens: sumOfInts(sql`case when ${unpriced} then coalesce(${jobs.inputTokens}, 0) else 0 end`),
    unpricedOutputTokens: sumOfInts(sql`case when ${unpriced} then coalesce(${jobs.outputTokens}, 0) else 0 end`),
    noUsageJobs: sumOfInts(sql`case when ${jobs.costUsd} is null and ${tokens} = 0 then 1 else 0 end`),
  };
  /** Group columns; a day is the server's local calendar day, as budgets count it. */
  const groupColumns = (): Record<CostGroupKey, SQL> => ({
    provider: sql`${jobs.provider}`,
    model: sql`coalesce(${jobs.usageModel}, ${jobs.model})`,
    agent: sql`${jobs.agent}`,
    day: d.localDay(jobs.createdAt),
  });
  const where = (filter: CostFilter): SQL | undefined =>
    and(
      sql`${jobs.createdAt} >= ${filter.from}`,
      sql`${jobs.createdAt} < ${filter.to}`,
      filter.provider ? eq(jobs.provider, filter.provider) : undefined,
      filter.agent ? eq(jobs.agent, filter.agent) : undefined,
    );
  const budgetOrder = [asc(d.bytewise(budgets.provider)), asc(d.bytewise(budgets.period))];
  // Prepared once: every job's launch and start look its provider's budgets up.
  const providerBudgets = d.prepare((db) =>
    db
      .select()
      .from(budgets)
      .where(eq(budgets.provider, sql.placeholder("provider")))
      .orderBy(...budgetOrder),
  );
  return {
    async overrides() {
      return d.db
        .select()
        .from(priceOverrides)
        .orderBy(asc(d.bytewise(priceOverrides.provider)), asc(d.bytewise(priceOverrides.model)));
    },
    async upsertOverride(row) {
      return stored(
        await d.db
          .insert(priceOverrides)
          .values(row)
          .onConflictDoUpdate({ target: [priceOverrides.provider, priceOverrides.model], set: row })
          .returning(),
      );
    },
    async deleteOverride(provider, model) {
      return d.changes(await d.db.delete(priceOverrides).where(and(eq(priceOverrides.provider, provider), eq(priceOverrides.model, model)))) > 0;
    },

    async budgets(provider) {
      if (provider) return providerBudgets({ provider });
      return d.db
        .select()
        .from(budgets)
        .orderBy(...budgetOrder);
    },
    async budget(id) {
      if (!isBudgetId(id)) return undefined;
      const [row] = await d.db.select().from(budgets).where(eq(budgets.id, id));
      return row;
    },
    async findBudget(provider, period) {
      const [row] = await d.db
        .select()
        .from(budgets)
        .where(and(eq(budgets.provider, provider), eq(budgets.period, period)));
      return row;
    },
    async insertBudget(row) {
      return stored(await d.db.insert(budgets).values(row).returning());
    },
    async updateBudget(id, patch) {
      if (!isBudgetId(id)) return undefined;
      const [row] = await d.db.update(budgets).set(patch).where(eq(budgets.id, id)).returning();
      return row;
    },
    async deleteBudget(id) {
      if (!isBudgetId(id)) return false;
      return d.changes(await d.db.delete(budgets).where(eq(budgets.id, id))) > 0;
    },

    async aggregate(filter, groupBy) {
      const columns = groupColumns();
      const keys = groupBy.map((k) => columns[k]);
      const query = d.db
        .select({ ...Object.fromEntries(groupBy.map((k) => [k, columns[k]])), ...sums })
        .from(jobs)
        .where(where(filter));
      const rows = await (keys.length ? query.groupBy(...keys).orderBy(...keys.map((k) => sql`${d.bytewise(k)} nulls first`)) : query);
      return rows as CostRow[];
    },

    async repriceable() {
      return d.db
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
    /** One statement (all or none), its rows sent as one parameter however many jobs are repriced. */
    async setCosts(changes) {
      const latest = lastOfEach(changes, (c) => c.id);
      if (!latest.length) return;
      const source = d.rowSource(
        { id: "text", cost_usd: "float8", cost_source: "text" },
        latest.map((c) => [c.id, c.costUsd, c.costSource]),
      );
      await d.run(sql`
        update ${jobs} set cost_usd = changed.cost_usd, cost_source = changed.cost_source
        from ${source} as changed where ${jobs.id} = changed.id`);
    },
  };
}
