import {
  localDay,
  type Budget,
  type BudgetList,
  type CostGroupKey,
  type CostReport,
  type CreateBudgetBody,
  type PriceList,
  type SetPriceBody,
  type UpdateBudgetBody,
} from "@corral/shared";
import type { CostRange } from "../lib/domain/cost-chart.js";
import { apiFetch, queryString } from "./client.js";

export type { CostRange };

export const costsApi = {
  report: (range: CostRange, groupBy: CostGroupKey[], signal?: AbortSignal) =>
    apiFetch<CostReport>(`/api/costs${queryString({ from: range.from, to: range.to, groupBy: groupBy.join(",") })}`, { signal }),
  prices: (signal?: AbortSignal) => apiFetch<PriceList>("/api/costs/prices", { signal }),
  setPrice: (body: SetPriceBody) => apiFetch<unknown>("/api/costs/prices", { method: "PUT", body }),
  deletePrice: (provider: string, model: string) => apiFetch<void>(`/api/costs/prices${queryString({ provider, model })}`, { method: "DELETE" }),
  budgets: (signal?: AbortSignal) => apiFetch<BudgetList>("/api/costs/budgets", { signal }),
  createBudget: (body: CreateBudgetBody) => apiFetch<Budget>("/api/costs/budgets", { method: "POST", body }),
  updateBudget: (id: number, body: UpdateBudgetBody) => apiFetch<Budget>(`/api/costs/budgets/${id}`, { method: "PATCH", body }),
  deleteBudget: (id: number) => apiFetch<void>(`/api/costs/budgets/${id}`, { method: "DELETE" }),
};

export function presetRange(preset: "7d" | "30d" | "month" | "today", now = new Date()): CostRange {
  const to = localDay(now);
  if (preset === "today") return { from: to, to };
  if (preset === "month") return { from: localDay(new Date(now.getFullYear(), now.getMonth(), 1)), to };
  const days = preset === "7d" ? 6 : 29;
  return { from: localDay(new Date(now.getFullYear(), now.getMonth(), now.getDate() - days)), to };
}
