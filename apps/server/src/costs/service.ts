import { EventEmitter } from "node:events";
import {
  formatUsd,
  type Budget,
  type BudgetPeriod,
  type CostGroupKey,
  type CostQuery,
  type CostReport,
  type CostTotals,
  type CreateBudgetBody,
  type Price,
  type PriceList,
  type SetPriceBody,
  type UpdateBudgetBody,
} from "@corral/shared";
import type { CostSums, PricedJobFields } from "../db/registry.js";
import type { Registry, Repos } from "../db/registry.js";
import { agentKindModules } from "../agents/kinds/index.js";
import type { AgentRow, BudgetRow, JobRow } from "../db/schema.js";
import { notFound, ServiceError } from "../lib/errors.js";
import { localTime, parseTime, periodWindow } from "./periods.js";
import { PRICE_TABLE, PRICE_TABLE_DATE, PRICE_TABLE_SOURCES } from "./price-table.js";
import { hasUsage, sumUsage, usageOf } from "./attempt-usage.js";
import { costOf, isCloudOllama, priceKeys, usedTokens, type CostFields, type Rates } from "./pricing.js";

const DAY_MS = 24 * 3600 * 1000;

/**
 * What the job service asks of cost accounting while jobs launch and run; `tx` is the transaction
 * of the launch or the write the answer is for.
 */
export interface JobCostPolicy {
  /** Throws a ServiceError naming the budget when the agent's provider is over one. */
  admit(agent: AgentRow, jobMaxCostUsd: number | null, tx?: Pick<Repos, "costs">): Promise<void>;
  /** The cost fields of a job with this usage. */
  price(row: JobRow, tx?: Pick<Repos, "agents">): Promise<CostFields>;
  /** Why a running job must stop, when its usage has passed its own limits. */
  overLimit(row: JobRow): string | null;
  /** What to tell of a job whose cost limit cannot stop it: it used tokens no known price turns into a cost. */
  blindLimit(row: JobRow): string | null;
}

/** A budget's check and its write share a transaction. */
export type CostServiceDeps = Pick<Registry, "costs" | "agents" | "transaction">;

const periodWord = (p: BudgetPeriod) => (p === "day" ? "daily" : "monthly");
const periodNow = (p: BudgetPeriod) => (p === "day" ? "today" : "this month");

export interface CostServiceEvents {
  /** Stored estimates changed with the prices, ended jobs' among them. */
  repriced: [];
}

/** Prices, budgets and the cost report: the one place that turns tokens into money. */
export class CostService extends EventEmitter<CostServiceEvents> implements JobCostPolicy {
  private overrides = new Map<string, Rates>();
  /** provider/period of the budgets the config file declares, as it last loaded. */
  private fileBudgets = new Set<string>();

  constructor(private readonly deps: CostServiceDeps) {
    super();
  }

  /** Reads the user's prices; at start, before any job is priced. */
  async start({ reprice = true }: { reprice?: boolean } = {}): Promise<void> {
    await this.loadOverrides();
    // The shipped table may be newer than the estimates stored with older jobs.
    if (reprice) await this.reprice();
  }

  private async loadOverrides(): Promise<void> {
    this.overrides = new Map(
      (await this.deps.costs.overrides()).map((o) => [
        keyOf(o.provider, o.model),
        { inputPerM: o.inputPerM, outputPerM: o.outputPerM, cachedInputPerM: o.cachedInputPerM },
      ]),
    );
  }

  /** The price in force for a provider's model: a user's override, else the shipped table. */
  rates = (provider: string | null, model: string): Rates | undefined => {
    for (const [p, m] of priceKeys(provider, model)) {
      const override = this.overrides.get(keyOf(p, m));
      if (override) return override;
      const row = PRICE_TABLE.find((r) => r.provider === p && r.model === m);
      if (row) return { inputPerM: row.input, outputPerM: row.output, cachedInputPerM: row.cachedInput };
    }
    return undefined;
  };

  async prices(): Promise<PriceList> {
    const overridden = new Set(this.overrides.keys());
    const table: Price[] = PRICE_TABLE.filter((r) => !overridden.has(keyOf(r.provider, r.model))).map((r) => ({
      provider: r.provider,
      model: r.model,
      inputPerM: r.input,
      outputPerM: r.output,
      cachedInputPerM: r.cachedInput,
      origin: "table",
      note: r.note ?? null,
    }));
    const overrides: Price[] = (await this.deps.costs.overrides()).map((o) => ({
      provider: o.provider,
      model: o.model,
      inputPerM: o.inputPerM,
      outputPerM: o.outputPerM,
      cachedInputPerM: o.cachedInputPerM,
      origin: "override",
      note: null,
    }));
    const prices = [...overrides, ...table].sort((a, b) => a.provider.localeCompare(b.provider) || a.model.localeCompare(b.model));
    return { tableDate: PRICE_TABLE_DATE, sources: PRICE_TABLE_SOURCES, prices };
  }

  /** Sets a user's price; jobs estimated with the old one are estimated again. */
  async setPrice(body: SetPriceBody): Promise<Price> {
    const row = await this.deps.costs.upsertOverride({
      provider: body.provider,
      model: body.model,
      inputPerM: body.inputPerM,
      outputPerM: body.outputPerM,
      cachedInputPerM: body.cachedInputPerM ?? null,
      updatedAt: Date.now(),
    });
    await this.loadOverrides();
    await this.reprice();
    return { ...row, origin: "override", note: null };
  }

  /** Removes a user's price; the shipped one (if any) applies again. */
  async deletePrice(provider: string, model: string): Promise<void> {
    if (!(await this.deps.costs.deleteOverride(provider, model))) {
      throw notFound(`no price override for ${provider}/${model}; shipped prices cannot be deleted, only overridden`, "model");
    }
    await this.loadOverrides();
    await this.reprice();
  }

  /** Estimates every job's cost again from today's prices (reported costs stay as reported). */
  async reprice(): Promise<number> {
    // Read and written in one transaction: usage stored meanwhile is not overwritten with a cost of the tokens before it.
    const changed = await this.deps.transaction(async (tx) => {
      // Runs at every start over every estimated job: look each agent up once, not once per job.
      const agents = new Map((await tx.agents.list()).map((a) => [a.name, a]));
      const changes: Array<{ id: string } & CostFields> = [];
      for (const job of await tx.costs.repriceable()) {
        const agent = agents.get(job.agent);
        const after = job.attempt > 1 ? await this.repriceAttempts(tx, job, agent) : this.costOfJob(job, agent);
        if (job.costUsd !== after.costUsd || job.costSource !== after.costSource) changes.push({ id: job.id, ...after });
      }
      if (changes.length) await tx.costs.setCosts(changes);
      return changes.length;
    });
    if (changed) this.emit("repriced");
    return changed;
  }

  /**
   * A retried job's cost is its attempts' summed (each priced on its own tokens, a reported one
   * kept as reported): each attempt is estimated again and stored, and the sum returned. A job
   * whose attempts kept no usage of their own (from before they did) is priced as a whole.
   */
  private async repriceAttempts(tx: Repos, job: PricedJobFields, agent: AgentRow | undefined): Promise<CostFields> {
    const attempts = await tx.jobs.attempts(job.id);
    if (!attempts.some(hasUsage)) return this.costOfJob(job, agent);
    const priced = [];
    for (const attempt of attempts) {
      const before = usageOf(attempt);
      const after = { ...before, ...this.costOfJob({ ...job, ...before }, agent) };
      if (after.costUsd !== before.costUsd || after.costSource !== before.costSource) {
        await tx.jobs.endAttempt(job.id, attempt.attempt, { costUsd: after.costUsd, costSource: after.costSource });
      }
      priced.push(after);
    }
    const { costUsd, costSource } = sumUsage(priced);
    return { costUsd, costSource };
  }

  private costOfJob(job: PricedJobFields, agent: AgentRow | undefined): CostFields {
    const provider = job.provider ?? agent?.provider ?? null;
    const model = job.usageModel ?? job.model;
    const local = provider === "ollama" && !isCloudOllama(model, agent?.baseUrl ?? null);
    return costOf({ ...job, provider, model, local }, this.rates);
  }

  async price(row: JobRow, tx: Pick<Repos, "agents"> = this.deps): Promise<CostFields> {
    return this.costOfJob(row, await tx.agents.get(row.agent));
  }

  overLimit(row: JobRow): string | null {
    const tokens = usedTokens(row);
    if (row.maxTokens !== null && tokens > row.maxTokens) {
      return `budget exceeded: the job used ${tokens} tokens, over its token limit of ${row.maxTokens}`;
    }
    if (row.maxCostUsd !== null && row.costUsd !== null && row.costUsd > row.maxCostUsd) {
      return `budget exceeded: the job cost ${formatUsd(row.costUsd)} (${row.costSource}), over its cost limit of ${formatUsd(row.maxCostUsd)}`;
    }
    return null;
  }

  blindLimit(row: JobRow): string | null {
    if (row.maxCostUsd === null || row.costUsd !== null || usedTokens(row) === 0) return null;
    const model = [row.provider, row.usageModel ?? row.model].filter(Boolean).join("/") || "its model";
    return `no price is known for ${model}, so its cost limit of ${formatUsd(row.maxCostUsd)} cannot stop it while it runs (a cost its worker reports at its end still counts); set a price on the Costs page (PUT /api/costs/prices), or give it a token limit`;
  }

  async admit(agent: AgentRow, jobMaxCostUsd: number | null, tx: Pick<Repos, "costs"> = this.deps): Promise<void> {
    const now = Date.now();
    for (const row of await tx.costs.budgets(agent.provider)) {
      const budget = await this.budgetView(row, now, tx);
      const used = `${agent.provider}'s ${periodWord(budget.period)} budget`;
      const retry = `raise it with PATCH /api/costs/budgets/${budget.id} or wait until ${localTime(budget.periodEnd)}`;
      const unpriced = budget.unpricedJobs ? ` (${budget.unpricedJobs} job(s) without a price are not in this sum)` : "";
      const { provider, period, maxCostUsd, maxTokens, usedCostUsd, usedTokens, periodEnd } = budget;
      const details = { budgetId: budget.id, budget: { provider, period, maxCostUsd, maxTokens, usedCostUsd, usedTokens, periodEnd } };
      if (budget.maxCostUsd !== null && budget.usedCostUsd >= budget.maxCostUsd) {
        throw new ServiceError(
          `budget exceeded: ${used} is ${formatUsd(budget.maxCostUsd)} and ${formatUsd(budget.usedCostUsd)} is used ${periodNow(budget.period)}${unpriced}; ${retry}`,
          429,
          "agent",
          undefined,
          "budget_exceeded",
          details,
        );
      }
      if (budget.maxTokens !== null && budget.usedTokens >= budget.maxTokens) {
        throw new ServiceError(
          `budget exceeded: ${used} is ${budget.maxTokens} tokens and ${budget.usedTokens} are used ${periodNow(budget.period)}; ${retry}`,
          429,
          "agent",
          undefined,
          "budget_exceeded",
          details,
        );
      }
      if (budget.maxCostUsd !== null && jobMaxCostUsd !== null && budget.usedCostUsd + jobMaxCostUsd > budget.maxCostUsd) {
        throw new ServiceError(
          `budget exceeded: this job may cost up to ${formatUsd(jobMaxCostUsd)}, and ${used} of ${formatUsd(budget.maxCostUsd)} has ${formatUsd(budget.maxCostUsd - budget.usedCostUsd)} left ${periodNow(budget.period)}`,
          429,
          "maxCostUsd",
          undefined,
          "budget_exceeded",
          details,
        );
      }
    }
  }

  async budgets(): Promise<Budget[]> {
    const now = Date.now();
    return Promise.all((await this.deps.costs.budgets()).map((b) => this.budgetView(b, now)));
  }

  async budget(id: number): Promise<Budget> {
    const row = await this.deps.costs.budget(id);
    if (!row) throw notFound(`budget ${id} not found`, "id");
    return this.budgetView(row);
  }

  /**
   * The providers a budget may name, sorted: those of Corral's agent kinds, of the registered
   * agents, of the price table and its overrides, and of jobs already run, plus `also` (a config
   * file's agents not stored yet). A budget for another name would never count anything.
   */
  async providers(also: readonly string[] = []): Promise<string[]> {
    const names = new Set<string>([...agentKindModules.map((m) => m.provider), ...PRICE_TABLE.map((r) => r.provider), ...also]);
    for (const a of await this.deps.agents.list()) names.add(a.provider);
    for (const o of await this.deps.costs.overrides()) names.add(o.provider);
    for (const g of await this.deps.costs.aggregate({ from: 0, to: Date.now() + DAY_MS }, ["provider"])) if (g.provider) names.add(g.provider);
    return [...names].sort();
  }

  /** The refusal of a budget for a provider Corral does not know (a typo such as "antropic"), naming the known ones. */
  unknownProvider(provider: string, known: readonly string[]): string | null {
    return known.includes(provider) ? null : `no provider ${JSON.stringify(provider)} is known here; use one of ${known.join(", ")}`;
  }

  /** Marks the budgets the config file declares (by provider and period); the rest are the registry's. */
  setFileBudgets(declared: readonly { provider: string; period: BudgetPeriod }[]): void {
    this.fileBudgets = new Set(declared.map((b) => `${b.provider}/${b.period}`));
  }

  async createBudget(body: CreateBudgetBody): Promise<Budget> {
    const refused = this.unknownProvider(body.provider, await this.providers());
    if (refused) throw new ServiceError(refused, 400, "provider");
    const row = await this.deps.transaction((tx) => this.insertBudget(tx, body));
    return this.budgetView(row);
  }

  private async insertBudget(tx: Repos, body: CreateBudgetBody): Promise<BudgetRow> {
    const existing = await tx.costs.findBudget(body.provider, body.period);
    if (existing) {
      throw new ServiceError(
        `${body.provider} already has a ${periodWord(body.period)} budget (id ${existing.id}); change it with PATCH`,
        409,
        "period",
      );
    }
    const now = Date.now();
    return tx.costs.insertBudget({
      provider: body.provider,
      period: body.period,
      maxCostUsd: body.maxCostUsd ?? null,
      maxTokens: body.maxTokens ?? null,
      createdAt: now,
      updatedAt: now,
    });
  }

  async updateBudget(id: number, body: UpdateBudgetBody): Promise<Budget> {
    const row = await this.deps.transaction((tx) => this.patchBudget(tx, id, body));
    return this.budgetView(row);
  }

  /** Read and written in one transaction: a limit the body leaves out keeps its stored value. */
  private async patchBudget(tx: Repos, id: number, body: UpdateBudgetBody): Promise<BudgetRow> {
    const current = await tx.costs.budget(id);
    if (!current) throw notFound(`budget ${id} not found`, "id");
    const maxCostUsd = body.maxCostUsd === undefined ? current.maxCostUsd : body.maxCostUsd;
    const maxTokens = body.maxTokens === undefined ? current.maxTokens : body.maxTokens;
    if (maxCostUsd === null && maxTokens === null) {
      throw new ServiceError("a budget needs maxCostUsd, maxTokens or both; delete it instead", 400, "maxCostUsd");
    }
    const row = await tx.costs.updateBudget(id, { maxCostUsd, maxTokens, updatedAt: Date.now() });
    if (!row) throw notFound(`budget ${id} not found`, "id");
    return row;
  }

  async deleteBudget(id: number): Promise<void> {
    if (!(await this.deps.costs.deleteBudget(id))) throw notFound(`budget ${id} not found`, "id");
  }

  private async budgetView(row: BudgetRow, now = Date.now(), tx: Pick<Repos, "costs"> = this.deps): Promise<Budget> {
    const { start, end } = periodWindow(row.period, now);
    const [sums] = await tx.costs.aggregate({ from: start, to: end, provider: row.provider }, []);
    const usedCostUsd = sums?.costUsd ?? 0;
    const usedTokens = (sums?.inputTokens ?? 0) + (sums?.outputTokens ?? 0);
    return {
      id: row.id,
      provider: row.provider,
      period: row.period,
      maxCostUsd: row.maxCostUsd,
      maxTokens: row.maxTokens,
      usedCostUsd,
      usedTokens,
      unpricedJobs: sums?.unpricedJobs ?? 0,
      periodStart: start,
      periodEnd: end,
      exceeded: (row.maxCostUsd !== null && usedCostUsd >= row.maxCostUsd) || (row.maxTokens !== null && usedTokens >= row.maxTokens),
      source: this.fileBudgets.has(`${row.provider}/${row.period}`) ? "file" : "registry",
    };
  }

  /** Cost and tokens over a range, grouped by provider, model, agent and/or day. */
  async report(query: CostQuery): Promise<CostReport> {
    const to = query.to === undefined ? Date.now() : parseTime(query.to, true);
    const from = query.from === undefined ? to - 30 * DAY_MS : parseTime(query.from, false);
    if (from >= to) throw new ServiceError(`from (${localTime(from)}) must be before to (${localTime(to)})`, 400, "from");
    const groupBy = query.groupBy?.length ? [...new Set(query.groupBy)] : ["provider" as const];
    const filter = { from, to, provider: query.provider, agent: query.agent };
    const groups = (await this.deps.costs.aggregate(filter, groupBy)).map((g) => ({ ...totals(g), ...pick(g, groupBy) }));
    const [all] = await this.deps.costs.aggregate(filter, []);
    return { from, to, groupBy, groups, totals: totals(all) };
  }
}

function keyOf(provider: string, model: string): string {
  return `${provider}\u0000${model}`;
}

function totals(s: CostSums | undefined): CostTotals {
  const n = (v: unknown) => Number(v ?? 0);
  return {
    jobs: n(s?.jobs),
    inputTokens: n(s?.inputTokens),
    outputTokens: n(s?.outputTokens),
    cachedInputTokens: n(s?.cachedInputTokens),
    costUsd: s?.costUsd === null || s?.costUsd === undefined ? null : Number(s.costUsd),
    reportedUsd: n(s?.reportedUsd),
    estimatedUsd: n(s?.estimatedUsd),
    pricedJobs: n(s?.pricedJobs),
    unpricedJobs: n(s?.unpricedJobs),
    unpricedInputTokens: n(s?.unpricedInputTokens),
    unpricedOutputTokens: n(s?.unpricedOutputTokens),
    noUsageJobs: n(s?.noUsageJobs),
  };
}

function pick(g: Partial<Record<CostGroupKey, string | null>>, keys: CostGroupKey[]): Partial<Record<CostGroupKey, string | null>> {
  return Object.fromEntries(keys.map((k) => [k, g[k] ?? null]));
}
