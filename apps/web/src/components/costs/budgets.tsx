import type { Budget } from "@corral/shared";
import { useState, type FormEvent } from "react";
import { ApiRequestError } from "../../api/client.js";
import { useConfigFile } from "../../hooks/use-config-file.js";
import { useBudgets, useCreateBudget, useDeleteBudget, useUpdateBudget } from "../../hooks/use-costs.js";
import { formatUsd, formatTokens, plural } from "../../lib/format/format.js";
import { describedBy, Field } from "../field.js";
import { ErrorState, Loading } from "../states.js";

/** A limit field's text as the API takes it: empty is no limit (null). */
const limitOf = (text: string) => (text.trim() === "" ? null : Number(text));

/** Raising (or lowering) a budget's limits in place; an emptied field drops that limit. */
function BudgetEdit({ budget, what, onDone }: { budget: Budget; what: string; onDone: () => void }) {
  const [cost, setCost] = useState(budget.maxCostUsd === null ? "" : String(budget.maxCostUsd));
  const [tokens, setTokens] = useState(budget.maxTokens === null ? "" : String(budget.maxTokens));
  const update = useUpdateBudget(budget.id);
  const err = update.error instanceof ApiRequestError ? update.error : null;
  const errorFor = (f: string) => err?.messageFor(f);
  const id = `budget-${budget.id}-edit`;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    update.mutate({ maxCostUsd: limitOf(cost), maxTokens: limitOf(tokens) }, { onSuccess: onDone });
  };
  return (
    <form onSubmit={submit} className="stack" aria-label={`New limits for ${what}`} noValidate>
      <div className="form-grid">
        <Field id={`${id}-cost`} label="Max USD" error={errorFor("maxCostUsd")}>
          <input
            id={`${id}-cost`}
            inputMode="decimal"
            value={cost}
            onChange={(e) => setCost(e.target.value)}
            {...describedBy(`${id}-cost`, errorFor("maxCostUsd"), false)}
          />
        </Field>
        <Field id={`${id}-tokens`} label="Max tokens" error={errorFor("maxTokens")}>
          <input
            id={`${id}-tokens`}
            inputMode="numeric"
            value={tokens}
            onChange={(e) => setTokens(e.target.value)}
            {...describedBy(`${id}-tokens`, errorFor("maxTokens"), false)}
          />
        </Field>
      </div>
      {update.error && !err?.field && (
        <div className="alert" role="alert">
          {update.error.message}
        </div>
      )}
      <div className="row">
        <button type="submit" className="primary small" disabled={update.isPending}>
          Save
        </button>
        <button type="button" className="small" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** One budget with its use so far; `id="budget-<id>"` lets messages elsewhere link to it. */
function BudgetRow({ budget, configPath }: { budget: Budget; configPath: string | null }) {
  const remove = useDeleteBudget(budget.id);
  const [editing, setEditing] = useState(false);
  const share = (used: number, max: number | null) => (max ? Math.min(100, (used / max) * 100) : 0);
  const what = `the ${budget.period === "day" ? "daily" : "monthly"} budget of ${budget.provider}`;
  return (
    <li id={`budget-${budget.id}`} className="card stack" style={{ gap: "0.35rem" }}>
      <div className="row">
        <strong className="mono">{budget.provider}</strong>
        <span className="muted small">per {budget.period}</span>
        {budget.source === "file" && <span className="badge info">from file</span>}
        {budget.exceeded && <span className="badge bad">exceeded</span>}
        <span className="grow" />
        {/* The file sets a budget it declares again whenever it changes, so that one is changed there, as its agents are. */}
        {budget.source === "file" ? (
          <span className="small muted">
            Change it in <span className="mono break-anywhere">{configPath ?? "the config file"}</span>
          </span>
        ) : (
          !editing && (
            <>
              <button type="button" className="small" onClick={() => setEditing(true)} aria-label={`Change ${what}`}>
                Change
              </button>
              <button type="button" className="small danger" onClick={() => remove.mutate()} aria-label={`Delete ${what}`}>
                Delete
              </button>
            </>
          )
        )}
      </div>
      {editing && <BudgetEdit budget={budget} what={what} onDone={() => setEditing(false)} />}
      {budget.maxCostUsd !== null && (
        <div>
          <div className="small">
            {formatUsd(budget.usedCostUsd)} of {formatUsd(budget.maxCostUsd)}
          </div>
          <div
            className={`meter${budget.exceeded ? " over" : ""}`}
            role="meter"
            aria-valuemin={0}
            aria-valuemax={budget.maxCostUsd}
            aria-valuenow={budget.usedCostUsd}
            aria-valuetext={`${formatUsd(budget.usedCostUsd)} of ${formatUsd(budget.maxCostUsd)}`}
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
          {plural(budget.unpricedJobs, "unpriced job")} in this period {budget.unpricedJobs === 1 ? "is" : "are"} not in the cost
        </span>
      )}
    </li>
  );
}

function BudgetForm({ providers }: { providers: string[] }) {
  const [form, setForm] = useState({ provider: "", period: "day", cost: "", tokens: "" });
  const create = useCreateBudget();
  const err = create.error instanceof ApiRequestError ? create.error : null;
  const errorFor = (f: string) => err?.messageFor(f);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate(
      {
        provider: form.provider,
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
        {/* Only providers Corral knows: a budget for a misspelt one would count nothing, forever. */}
        <Field id="budget-provider" label="Provider" error={errorFor("provider")}>
          <select
            id="budget-provider"
            value={form.provider}
            onChange={(e) => setForm({ ...form, provider: e.target.value })}
            {...describedBy("budget-provider", errorFor("provider"), false)}
          >
            <option value="">Choose a provider</option>
            {providers.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
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

export function BudgetsSection() {
  const budgets = useBudgets();
  const configPath = useConfigFile().data?.path ?? null;
  return (
    <section aria-labelledby="budgets-heading">
      <h2 id="budgets-heading">Budgets</h2>
      {budgets.isError ? (
        <ErrorState error={budgets.error} what="budgets" />
      ) : budgets.isPending ? (
        <Loading what="budgets" />
      ) : budgets.data.budgets.length === 0 ? (
        <p className="muted small">No budgets. A budget refuses new jobs of its provider once the period's use passes it.</p>
      ) : (
        <ul className="grid-2" style={{ listStyle: "none", padding: 0, margin: "0 0 0.75rem" }}>
          {budgets.data.budgets.map((b) => (
            <BudgetRow key={b.id} budget={b} configPath={configPath} />
          ))}
        </ul>
      )}
      <BudgetForm providers={budgets.data?.providers ?? []} />
    </section>
  );
}
