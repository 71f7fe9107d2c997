import type { OllamaModelList } from "@corral/shared";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ollamaApi } from "../api/ollama.js";
import { queryKeys } from "../lib/transport/query-keys.js";

/** The models an Ollama agent's server offers; `agent` empty means the default server. */
export function useOllamaModels(
  agent: string | undefined,
  options: { enabled?: boolean; refetchInterval?: number; staleTime?: number; retry?: boolean } = {},
) {
  return useQuery({
    queryKey: queryKeys.ollama.models(agent ?? ""),
    queryFn: ({ signal }) => ollamaApi.models(agent, signal),
    ...options,
  });
}

/** The models of the server's last good listing, asked for only while it does not answer. */
export function useOllamaLastKnown(agent: string | undefined, enabled: boolean) {
  return useQuery({
    queryKey: queryKeys.ollama.lastKnown(agent ?? ""),
    queryFn: ({ signal }) => ollamaApi.lastKnown(agent, signal),
    enabled,
  });
}

/** Checks whether a model calls tools and writes the outcome into the cached model list. */
export function useProbeModel(model: string, agent: string | undefined) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => ollamaApi.probe({ model, ...(agent ? { agent } : {}) }),
    onSuccess: ({ outcome, detail, checkedAt }) =>
      client.setQueryData<OllamaModelList>(queryKeys.ollama.models(agent ?? ""), (list) =>
        list ? { ...list, models: list.models.map((m) => (m.name === model ? { ...m, probe: { outcome, detail, checkedAt } } : m)) } : list,
      ),
  });
}
