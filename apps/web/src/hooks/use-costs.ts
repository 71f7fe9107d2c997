import type { CostGroupKey, CreateBudgetBody, SetPriceBody, UpdateBudgetBody } from "@corral/shared";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { costsApi, type CostRange } from "../api/costs.js";
import { queryKeys } from "../lib/transport/query-keys.js";

export function useCostReport(range: CostRange, groupBy: CostGroupKey[]) {
  return useQuery({
    queryKey: queryKeys.costs.summary(range, groupBy),
    queryFn: ({ signal }) => costsApi.report(range, groupBy, signal),
    refetchInterval: 10_000,
  });
}

export function useBudgets() {
  return useQuery({ queryKey: queryKeys.costs.budgets(), queryFn: ({ signal }) => costsApi.budgets(signal), refetchInterval: 10_000 });
}

export function usePrices() {
  return useQuery({ queryKey: queryKeys.costs.prices(), queryFn: ({ signal }) => costsApi.prices(signal) });
}

export function useDeleteBudget(id: number) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => costsApi.deleteBudget(id),
    onSuccess: () => void client.invalidateQueries({ queryKey: queryKeys.costs.budgets() }),
  });
}

export function useUpdateBudget(id: number) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: UpdateBudgetBody) => costsApi.updateBudget(id, body),
    onSuccess: () => void client.invalidateQueries({ queryKey: queryKeys.costs.budgets() }),
  });
}

export function useCreateBudget() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: CreateBudgetBody) => costsApi.createBudget(body),
    onSuccess: () => void client.invalidateQueries({ queryKey: queryKeys.costs.budgets() }),
  });
}

export function useDeletePrice() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ provider, model }: { provider: string; model: string }) => costsApi.deletePrice(provider, model),
    onSuccess: () => void client.invalidateQueries({ queryKey: queryKeys.costs.all }),
  });
}

export function useSetPrice() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: SetPriceBody) => costsApi.setPrice(body),
    onSuccess: () => void client.invalidateQueries({ queryKey: queryKeys.costs.all }),
  });
}
