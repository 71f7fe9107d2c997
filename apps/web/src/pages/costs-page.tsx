import type { Budget, CostGroup, CostReport, CostTotals, PriceList } from "@corral/shared";
import { useMemo, useState, type FormEvent } from "react";
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { ApiRequestError } from "../api/client.js";
import { chartRows, presetRange, type CostRange } from "../api/costs.js";
import { describedBy, Field } from "../components/field.js";
import { EmptyState, ErrorState, Loading } from "../components/states.js";
import { formatCost, formatTokens } from "../lib/format/format.js";
import { useBudgets, useCostReport, useCreateBudget, useDeleteBudget, usePrices, useSetPrice } from "../hooks/use-costs.js";

const palette = ["#2457c5", "#d9480f", "#2b8a3e", "#9c36b5", "#e67700", "#0c8599", "#c2255c", "#5c940d"];
const presets = [
  { id: "today", label: "Today" },
  { id: "7d", label: "7 days" },
  { id: "30d", label: "30 days" },
  { id: "month", label: "This month" },
] as const;

/** A cost that counts unpriced jobs as unknown, never as $0. */
function CostCell({ t }: { t: CostTotals }) {
  return (
    <>
      {t.costUsd === null ? (
        t.unpricedJobs > 0 ? (
          <span className="badge warn">unpriced</span>
        ) : (
          <span className="muted" title="These jobs reported no token usage">
            no usage
          </span>
        )
      ) : (
        formatCost(t.costUsd)
      )}
      {t.costUsd !== null && t.unpricedJobs > 0 && (
        <div className="small" style={{ color: "var(--warn)" }}>
          + {t.unpricedJobs} unpriced
        </div>
      )}
    </>
  );
}

function GroupTable({ title, groups, label }: { title: string; groups: CostGroup[]; label: (g: CostGroup) => string }) {
  return (
    <section className="card" aria-label={title}>
      <h3 style={{ marginTop: 0 }}>{title}</h3>
      {groups.length === 0 ? (
        <p className="muted small">No jobs in this period.</p>
      ) : (
        <div style={{ overflowX: "auto" }}>
          <table className="cards">
            <thead>
              <tr>
                <th>{title.replace(/^By /, "")}</th>
                <th className="num">Jobs</th>
                <th className="num">In</th>
                <th className="num">Out</th>
                <th className="num">Cost</th>
              </tr>
            </thead>
            <tbody>
              {groups.map((g) => (
                <tr key={label(g)}>
                  <td className="mono small">{label(g)}</td>
                  <td data-label="Jobs" className="num">
                    {g.jobs}
                  </td>
                  <td data-label="In" className="num">
                    {formatTokens(g.inputTokens)}
                  </td>
                  <td data-label="Out" className="num">
                    {formatTokens(g.outputTokens)}
                  </td>
                  <td data-label="Cost" className="num">
                    <CostCell t={g} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function BudgetRow({ budget }: { budget: Budget }) {
  const remove = useDeleteBudget(budget.id);
  const share = (used: number, max: number | null) => (max ? Math.min(100, (used / max) * 100) : 0);
  return (
    <li className="card stack" style={{ gap: "0.35rem" }}>
      <div className="row">
        <strong className="mono">{budget.provider}</strong>
        <span className="muted small">per {budget.period}</span>
        {budget.exceeded && <span className="badge bad">exceeded</span>}
        <span className="grow" />
        <button
          type="button"
          className="small danger"
          onClick={() => remove.mutate()}
          aria-label={`Delete the ${budget.period} budget of ${budget.provider}`}
        >
          Delete
        </button>
      </div>
      {budget.maxCostUsd !== null && (
        <div>
          <div className="small">
            {formatCost(budget.usedCostUsd)} of {formatCost(budget.maxCostUsd)}
          </div>
          <div
            className={`meter${budget.exceeded ? " over" : ""}`}
            role="meter"
            aria-valuemin={0}
            aria-valuemax={budget.maxCostUsd}
            aria-valuenow={budget.usedCostUsd}
            aria-label={`${budget.provider} cost used`}
          >
            <span style={{ width: `${share(budget.usedCostUsd, budget.maxCostUsd)}%` }} />
          </div>
        </div>
      )}
      {budget.maxTokens !== null && (
        <div>
          <div className="small">
            {formatTokens(budget.usedTokens)} of {formatTokens(budget.maxTokens)} tokens
          </div>
          <div
            className="meter"
            role="meter"
            aria-valuemin={0}
            aria-valuemax={budget.maxTokens}
            aria-valuenow={budget.usedTokens}
            aria-label={`${budget.provider} tokens used`}
          >
            <span style={{ width: `${share(budget.usedTokens, budget.maxTokens)}%` }} />
          </div>
        </div>
      )}
      {budget.unpricedJobs > 0 && (
        <span className="small" style={{ color: "var(--warn)" }}>
          {budget.unpricedJobs} unpriced jobs in this period are not in the cost
        </span>
      )}
    </li>
  );
}

function BudgetForm() {
  const [form, setForm] = useState({ provider: "", period: "day", cost: "", tokens: "" });
  const create = useCreateBudget();
  const err = create.error instanceof ApiRequestError ? create.error : null;
  const errorFor = (f: string) => err?.messageFor(f);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate(
      {
        provider: form.provider.trim(),
        period: form.period as "day" | "month",
        ...(form.cost ? { maxCostUsd: Number(form.cost) } : {}),
        ...(form.tokens ? { maxTokens: Number(form.tokens) } : {}),
      },
      { onSuccess: () => setForm({ provider: "", period: "day", cost: "", tokens: "" }) },
    );
  };
  return (
    <form onSubmit={submit} className="card stack" aria-label="Add a budget" noValidate>
      <div className="form-grid">
        <Field id="budget-provider" label="Provider" error={errorFor("provider")}>
          <input
            id="budget-provider"
            value={form.provider}
            placeholder="anthropic"
            onChange={(e) => setForm({ ...form, provider: e.target.value })}
            {...describedBy("budget-provider", errorFor("provider"), false)}
          />
        </Field>
        <Field id="budget-period" label="Period">
          <select id="budget-period" value={form.period} onChange={(e) => setForm({ ...form, period: e.target.value })}>
            <option value="day">per day</option>
            <option value="month">per month</option>
          </select>
        </Field>
        <Field id="budget-cost" label="Max USD" error={errorFor("maxCostUsd")}>
          <input
            id="budget-cost"
            inputMode="decimal"
            value={form.cost}
            onChange={(e) => setForm({ ...form, cost: e.target.value })}
            {...describedBy("budget-cost", errorFor("maxCostUsd"), false)}
          />
        </Field>
        <Field id="budget-tokens" label="Max tokens" error={errorFor("maxTokens")}>
          <input
            id="budget-tokens"
            inputMode="numeric"
            value={form.tokens}
            onChange={(e) => setForm({ ...form, tokens: e.target.value })}
            {...describedBy("budget-tokens", errorFor("maxTokens"), false)}
          />
        </Field>
      </div>
      {create.error && !err?.field && (
        <div className="alert" role="alert">
          {create.error.message}
        </div>
      )}
      <div>
        <button type="submit" className="primary" disabled={create.isPending}>
          Add budget
        </button>
      </div>
    </form>
  );
}

function PriceForm({ initial }: { initial: { provider: string; model: string } }) {
  const [form, setForm] = useState({ ...initial, input: "", output: "" });
  const save = useSetPrice();
  const err = save.error instanceof ApiRequestError ? save.error : null;
  return (
    <form
      className="card stack"
      aria-label="Set a price"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate({ provider: form.provider, model: form.model, inputPerM: Number(form.input), outputPerM: Number(form.output) });
      }}
    >
      <div className="form-grid">
        <Field id="price-provider" label="Provider" error={err?.messageFor("provider")}>
          <input id="price-provider" value={form.provider} onChange={(e) => setForm({ ...form, provider: e.target.value })} />
        </Field>
        <Field id="price-model" label="Model" error={err?.messageFor("model")}>
          <input id="price-model" value={form.model} onChange={(e) => setForm({ ...form, model: e.target.value })} />
        </Field>
        <Field id="price-input" label="USD / M input" error={err?.messageFor("inputPerM")}>
          <input id="price-input" inputMode="decimal" value={form.input} onChange={(e) => setForm({ ...form, input: e.target.value })} />
        </Field>
        <Field id="price-output" label="USD / M output" error={err?.messageFor("outputPerM")}>
          <input id="price-output" inputMode="decimal" value={form.output} onChange={(e) => setForm({ ...form, output: e.target.value })} />
        </Field>
      </div>
      <div className="row">
        <button type="submit" className="primary" disabled={save.isPending}>
          Save price
        </button>
        {save.isSuccess && (
          <span className="small" role="status">
            Saved; totals now use it.
          </span>
        )}
      </div>
    </form>
  );
}

type Preset = (typeof presets)[number]["id"] | "custom";

function PeriodPicker({
  preset,
  range,
  onPreset,
  onCustom,
}: {
  preset: Preset;
  range: CostRange;
  onPreset: (p: Preset) => void;
  onCustom: (r: CostRange) => void;
}) {
  return (
    <div className="row" role="group" aria-label="Period">
      {presets.map((p) => (
        <button
          key={p.id}
          type="button"
          className="small"
          aria-pressed={preset === p.id}
          onClick={() => onPreset(p.id)}
          style={preset === p.id ? { background: "var(--accent)", color: "var(--accent-text)", borderColor: "var(--accent)" } : undefined}
        >
          {p.label}
        </button>
      ))}
      <input type="date" aria-label="From" value={range.from} onChange={(e) => onCustom({ ...range, from: e.target.value })} />
      <input type="date" aria-label="To" value={range.to} onChange={(e) => onCustom({ ...range, to: e.target.value })} />
    </div>
  );
}

function TotalsCard({ t }: { t: CostTotals }) {
  return (
    <div className="card row" style={{ gap: "2rem" }} role="group" aria-label="Totals">
      <div className="stat">
        <span className="value" data-testid="total-cost">
          {formatCost(t.costUsd)}
        </span>
        <span className="label">cost of priced jobs</span>
      </div>
      <div className="stat">
        <span className="value">{t.jobs}</span>
        <span className="label">jobs</span>
      </div>
      <div className="stat">
        <span className="value">{formatTokens(t.inputTokens)}</span>
        <span className="label">tokens in ({formatTokens(t.cachedInputTokens)} cached)</span>
      </div>
      <div className="stat">
        <span className="value">{formatTokens(t.outputTokens)}</span>
        <span className="label">tokens out</span>
      </div>
      <div className="stat">
        <span className="value" style={t.unpricedJobs ? { color: "var(--warn)" } : undefined}>
          {t.unpricedJobs}
        </span>
        <span className="label">unpriced jobs (cost unknown)</span>
      </div>
      {t.noUsageJobs > 0 && (
        <div className="stat">
          <span className="value muted">{t.noUsageJobs}</span>
          <span className="label">jobs reported no usage</span>
        </div>
      )}
    </div>
  );
}

function CostChart({ range, jobs }: { range: CostRange; jobs: number }) {
  const daily = useCostReport(range, ["day", "provider"]);
  const chart = useMemo(() => (daily.data ? chartRows(daily.data, { from: range.from, to: range.to }) : null), [daily.data, range.from, range.to]);
  return (
    <section aria-labelledby="chart-heading">
      <h2 id="chart-heading">Cost per provider per day</h2>
      {jobs === 0 ? (
        <EmptyState title="No jobs in this period">Costs appear as workers report usage.</EmptyState>
      ) : chart ? (
        <div className="card" style={{ height: 280 }} role="img" aria-label="Bar chart of cost per provider per day">
          <ResponsiveContainer width="100%" height="100%">
            <BarChart data={chart.rows} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
              <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" />
              <XAxis dataKey="day" tick={{ fill: "var(--muted)", fontSize: 12 }} tickFormatter={(d: string) => d.slice(5)} />
              <YAxis
                tick={{ fill: "var(--muted)", fontSize: 12 }}
                tickFormatter={(v: number) => (v === 0 ? "$0" : `$${v.toFixed(v < 0.1 ? 4 : v < 10 ? 2 : 0)}`)}
                width={64}
              />
              <Tooltip
                formatter={(v) => formatCost(Number(v))}
                contentStyle={{ background: "var(--surface)", border: "1px solid var(--border)", color: "var(--text)" }}
              />
              <Legend />
              {chart.providers.map((p, i) => (
                <Bar key={p} dataKey={p} stackId="cost" fill={palette[i % palette.length]} isAnimationActive={false} />
              ))}
            </BarChart>
          </ResponsiveContainer>
        </div>
      ) : (
        <Loading what="the chart" />
      )}
    </section>
  );
}

function UnpricedModels({ groups, onPrice }: { groups: CostGroup[]; onPrice: (target: { provider: string; model: string }) => void }) {
  return (
    <section aria-labelledby="unpriced-heading">
      <h2 id="unpriced-heading">Unpriced models</h2>
      <p className="small muted">
        These models used tokens but Corral knows no price for them, so their cost is unknown (not $0). Set a price to count them.
      </p>
      <ul className="stack" style={{ listStyle: "none", padding: 0 }}>
        {groups.map((g) => (
          <li key={`${g.provider}/${g.model}`} className="row">
            <span className="mono">
              {g.provider} / {g.model}
            </span>
            <span className="small muted">
              {formatTokens(g.unpricedInputTokens)} in · {formatTokens(g.unpricedOutputTokens)} out
            </span>
            <button type="button" className="small" onClick={() => onPrice({ provider: g.provider ?? "", model: g.model ?? "" })}>
              Set price
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** Totals, the chart, the group tables and the models without a price, for one period. */
function Report({
  range,
  byProvider,
  onPrice,
}: {
  range: CostRange;
  byProvider: CostReport;
  onPrice: (target: { provider: string; model: string }) => void;
}) {
  const byModel = useCostReport(range, ["provider", "model"]);
  const byAgent = useCostReport(range, ["agent"]);
  const unpricedModels = byModel.data?.groups.filter((g) => g.unpricedJobs > 0) ?? [];
  return (
    <>
      <TotalsCard t={byProvider.totals} />
      <CostChart range={range} jobs={byProvider.totals.jobs} />
      <div className="grid-2" style={{ marginTop: "0.75rem" }}>
        <GroupTable title="By provider" groups={byProvider.groups} label={(g) => g.provider ?? "unknown"} />
        <GroupTable title="By agent" groups={byAgent.data?.groups ?? []} label={(g) => g.agent ?? "unknown"} />
      </div>
      <div style={{ marginTop: "0.75rem" }}>
        <GroupTable title="By model" groups={byModel.data?.groups ?? []} label={(g) => `${g.provider ?? "?"} / ${g.model ?? "unknown"}`} />
      </div>
      {unpricedModels.length > 0 && <UnpricedModels groups={unpricedModels} onPrice={onPrice} />}
    </>
  );
}

function BudgetsSection() {
  const budgets = useBudgets();
  return (
    <section aria-labelledby="budgets-heading">
      <h2 id="budgets-heading">Budgets</h2>
      {budgets.isError ? (
        <ErrorState error={budgets.error} what="budgets" />
      ) : budgets.isPending ? (
        <Loading what="budgets" />
      ) : budgets.data.length === 0 ? (
        <p className="muted small">No budgets. A budget refuses new jobs of its provider once the period's use passes it.</p>
      ) : (
        <ul className="grid-2" style={{ listStyle: "none", padding: 0, margin: "0 0 0.75rem" }}>
          {budgets.data.map((b) => (
            <BudgetRow key={b.id} budget={b} />
          ))}
        </ul>
      )}
      <BudgetForm />
    </section>
  );
}

function PricesNote({ prices, onPrice }: { prices: PriceList; onPrice: () => void }) {
  const overrides = prices.prices.filter((p) => p.origin === "override").length;
  return (
    <p className="small muted">
      Prices: {prices.prices.length} models, table of {prices.tableDate}
      {overrides > 0 ? `, ${overrides} set by you` : ""}.{" "}
      <button type="button" className="link small" onClick={onPrice}>
        Set a price
      </button>
    </p>
  );
}

export function CostsPage() {
  const [preset, setPreset] = useState<Preset>("30d");
  const [custom, setCustom] = useState<CostRange>(() => presetRange("30d"));
  const range = preset === "custom" ? custom : presetRange(preset);
  const byProvider = useCostReport(range, ["provider"]);
  const prices = usePrices();
  const [pricing, setPricing] = useState<{ provider: string; model: string } | null>(null);

  return (
    <>
      <div className="page-head">
        <h1>Costs</h1>
        <PeriodPicker
          preset={preset}
          range={range}
          onPreset={setPreset}
          onCustom={(r) => {
            setCustom(r);
            setPreset("custom");
          }}
        />
      </div>
      {byProvider.isError ? (
        <ErrorState error={byProvider.error} what="costs" onRetry={() => void byProvider.refetch()} />
      ) : !byProvider.data ? (
        <Loading what="costs" />
      ) : (
        <>
          <Report range={range} byProvider={byProvider.data} onPrice={setPricing} />
          {pricing && <PriceForm key={`${pricing.provider}/${pricing.model}`} initial={pricing} />}
        </>
      )}
      <BudgetsSection />
      {prices.data && <PricesNote prices={prices.data} onPrice={() => setPricing({ provider: "", model: "" })} />}
    </>
  );
}
