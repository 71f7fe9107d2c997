import { localDay, type Budget, type CostGroupKey, type CostReport, type CreateBudgetBody, type PriceList, type SetPriceBody } from "@corral/shared";
import { apiFetch, queryString } from "./client.js";

export interface CostRange {
  /** `YYYY-MM-DD`, inclusive. */
  from: string;
  /** `YYYY-MM-DD`, inclusive (the server counts a date as its whole day). */
  to: string;
}

export const costsApi = {
  report: (range: CostRange, groupBy: CostGroupKey[], signal?: AbortSignal) =>
    apiFetch<CostReport>(`/api/costs${queryString({ from: range.from, to: range.to, groupBy: groupBy.join(",") })}`, { signal }),
  prices: (signal?: AbortSignal) => apiFetch<PriceList>("/api/costs/prices", { signal }),
  setPrice: (body: SetPriceBody) => apiFetch<unknown>("/api/costs/prices", { method: "PUT", body }),
  budgets: (signal?: AbortSignal) => apiFetch<{ budgets: Budget[] }>("/api/costs/budgets", { signal }).then((r) => r.budgets),
  createBudget: (body: CreateBudgetBody) => apiFetch<Budget>("/api/costs/budgets", { method: "POST", body }),
  deleteBudget: (id: number) => apiFetch<void>(`/api/costs/budgets/${id}`, { method: "DELETE" }),
};

export function presetRange(preset: "7d" | "30d" | "month" | "today", now = new Date()): CostRange {
  const to = localDay(now);
  if (preset === "today") return { from: to, to };
  if (preset === "month") return { from: localDay(new Date(now.getFullYear(), now.getMonth(), 1)), to };
  const days = preset === "7d" ? 6 : 29;
  return { from: localDay(new Date(now.getFullYear(), now.getMonth(), now.getDate() - days)), to };
}

/** Every day of the range, so the chart shows quiet days as empty rather than skipping them. */
export function daysOf(range: CostRange): string[] {
  const out: string[] = [];
  const [fy, fm, fd] = range.from.split("-").map(Number) as [number, number, number];
  const d = new Date(fy, fm - 1, fd);
  for (let i = 0; i < 400 && localDay(d) <= range.to; i++) {
    out.push(localDay(d));
    d.setDate(d.getDate() + 1);
  }
  return out;
}

/** Rows for a stacked chart: one per day, one key per provider with its cost (priced jobs only). */
export function chartRows(report: CostReport, range: CostRange): { rows: Record<string, number | string>[]; providers: string[] } {
  const providers = [...new Set(report.groups.map((g) => g.provider ?? "unknown"))].sort();
  const byDay = new Map<string, Record<string, number | string>>();
  for (const day of daysOf(range)) byDay.set(day, { day });
  for (const g of report.groups) {
    const row = byDay.get(g.day ?? "");
    if (!row) continue;
    const key = g.provider ?? "unknown";
    row[key] = ((row[key] as number | undefined) ?? 0) + (g.costUsd ?? 0);
  }
  return { rows: [...byDay.values()], providers };
}
