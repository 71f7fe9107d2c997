import { and, asc, eq, isNotNull, isNull, or, sql, type SQL } from "drizzle-orm";
import type { CostGroupKey } from "@corral/shared";
import type { Db } from "../client.js";
import { budgets, jobs, priceOverrides, type BudgetRow, type JobRow, type PriceOverrideRow } from "../schema.js";

export type NewBudgetRow = typeof budgets.$inferInsert;
export type BudgetPatch = Partial<Pick<NewBudgetRow, "maxCostUsd" | "maxTokens" | "updatedAt">>;

/** Sums over jobs, as the cost report and budgets show them. */
export interface CostSums {
  jobs: number;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  costUsd: number | null;
  reportedUsd: number;
  estimatedUsd: number;
  pricedJobs: number;
  unpricedJobs: number;
  unpricedInputTokens: number;
  unpricedOutputTokens: number;
  noUsageJobs: number;
}

export interface CostFilter {
  from: number;
  to: number;
  provider?: string;
  agent?: string;
}

export type PricedJobFields = Pick<
  JobRow,
  "id" | "agent" | "provider" | "model" | "usageModel" | "inputTokens" | "outputTokens" | "cachedInputTokens" | "costUsd" | "costSource" | "attempt"
>;

const tokens = sql`coalesce(${jobs.inputTokens}, 0) + coalesce(${jobs.outputTokens}, 0)`;
const unpriced = sql`${jobs.costUsd} is null and ${tokens} > 0`;

const sums = {
  jobs: sql<number>`count(*)`,
  inputTokens: sql<number>`coalesce(sum(${jobs.inputTokens}), 0)`,
  outputTokens: sql<number>`coalesce(sum(${jobs.outputTokens}), 0)`,
  cachedInputTokens: sql<number>`coalesce(sum(${jobs.cachedInputTokens}), 0)`,
  costUsd: sql<number | null>`sum(${jobs.costUsd})`,
  reportedUsd: sql<number>`coalesce(sum(case when ${jobs.costSource} = 'reported' then ${jobs.costUsd} end), 0)`,
  estimatedUsd: sql<number>`coalesce(sum(case when ${jobs.costSource} = 'estimated' then ${jobs.costUsd} end), 0)`,
  pricedJobs: sql<number>`count(${jobs.costUsd})`,
  unpricedJobs: sql<number>`coalesce(sum(case when ${unpriced} then 1 else 0 end), 0)`,
  unpricedInputTokens: sql<number>`coalesce(sum(case when ${unpriced} then coalesce(${jobs.inputTokens}, 0) else 0 end), 0)`,
  unpricedOutputTokens: sql<number>`coalesce(sum(case when ${unpriced} then coalesce(${jobs.outputTokens}, 0) else 0 end), 0)`,
  noUsageJobs: sql<number>`coalesce(sum(case when ${jobs.costUsd} is null and ${tokens} = 0 then 1 else 0 end), 0)`,
};

/** Group columns; a day is the server's local calendar day, as budgets count it. */
const groupColumns: Record<CostGroupKey, SQL> = {
  provider: sql`${jobs.provider}`,
  model: sql`coalesce(${jobs.usageModel}, ${jobs.model})`,
  agent: sql`${jobs.agent}`,
  day: sql`strftime('%Y-%m-%d', ${jobs.createdAt} / 1000, 'unixepoch', 'localtime')`,
};

function where(filter: CostFilter): SQL | undefined {
  const parts: SQL[] = [sql`${jobs.createdAt} >= ${filter.from}`, sql`${jobs.createdAt} < ${filter.to}`];
  if (filter.provider) parts.push(eq(jobs.provider, filter.provider));
  if (filter.agent) parts.push(eq(jobs.agent, filter.agent));
  return and(...parts);
}

export function createCostsRepo(db: Db) {
  const byProvider = asc(budgets.provider);
  // Prepared once: every job's launch and start look its provider's budgets up.
  const providerBudgets = db
    .select()
    .from(budgets)
    .where(eq(budgets.provider, sql.placeholder("provider")))
    .orderBy(byProvider, asc(budgets.period))
    .prepare();
  return {
    overrides(): PriceOverrideRow[] {
      return db.select().from(priceOverrides).orderBy(asc(priceOverrides.provider), asc(priceOverrides.model)).all();
    },
    upsertOverride(row: PriceOverrideRow): PriceOverrideRow {
      return db
        .insert(priceOverrides)
        .values(row)
        .onConflictDoUpdate({ target: [priceOverrides.provider, priceOverrides.model], set: row })
        .returning()
        .get();
    },
    deleteOverride(provider: string, model: string): boolean {
      const gone = db
        .delete(priceOverrides)
        .where(and(eq(priceOverrides.provider, provider), eq(priceOverrides.model, model)))
        .returning()
        .all();
      return gone.length > 0;
    },

    budgets(provider?: string): BudgetRow[] {
      if (provider) return providerBudgets.all({ provider });
      return db.select().from(budgets).orderBy(byProvider, asc(budgets.period)).all();
    },
    budget(id: number): BudgetRow | undefined {
      return db.select().from(budgets).where(eq(budgets.id, id)).get();
    },
    findBudget(provider: string, period: "day" | "month"): BudgetRow | undefined {
      return db
        .select()
        .from(budgets)
        .where(and(eq(budgets.provider, provider), eq(budgets.period, period)))
        .get();
    },
    insertBudget(row: NewBudgetRow): BudgetRow {
      return db.insert(budgets).values(row).returning().get();
    },
    updateBudget(id: number, patch: BudgetPatch): BudgetRow | undefined {
      return db.update(budgets).set(patch).where(eq(budgets.id, id)).returning().get();
    },
    deleteBudget(id: number): boolean {
      return db.delete(budgets).where(eq(budgets.id, id)).returning().all().length > 0;
    },

    /** Totals over the filter, grouped by the given keys (none: one row). */
    aggregate(filter: CostFilter, groupBy: CostGroupKey[]): Array<CostSums & Partial<Record<CostGroupKey, string | null>>> {
      const keys = Object.fromEntries(groupBy.map((k) => [k, groupColumns[k]]));
      const query = db
        .select({ ...keys, ...sums })
        .from(jobs)
        .where(where(filter));
      const grouped = groupBy.length ? query.groupBy(...groupBy.map((k) => groupColumns[k])).orderBy(...groupBy.map((k) => groupColumns[k])) : query;
      return grouped.all() as Array<CostSums & Partial<Record<CostGroupKey, string | null>>>;
    },

    /** Jobs whose cost is not the CLI's own and may change with prices. */
    repriceable(): PricedJobFields[] {
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
        .all();
    },
    setCosts(changes: Array<{ id: string; costUsd: number | null; costSource: "reported" | "estimated" | null }>): void {
      db.transaction((tx) => {
        for (const c of changes) tx.update(jobs).set({ costUsd: c.costUsd, costSource: c.costSource }).where(eq(jobs.id, c.id)).run();
      });
    },
  };
}

export type CostsRepo = ReturnType<typeof createCostsRepo>;
