import { localDay, type Budget, type CostGroupKey, type CostReport, type CreateBudgetBody, type PriceList, type SetPriceBody } from "@corral/shared";
import type { CostRange } from "../lib/domain/cost-chart.js";
import { apiFetch, queryString } from "./client.js";

export type { CostRange };

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
