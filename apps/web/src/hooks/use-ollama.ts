import type { OllamaModelList, OllamaProbe } from "@corral/shared";
import { type QueryClient, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useRef, useState } from "react";
import { ollamaApi } from "../api/ollama.js";
import { type ProbeAllRun, probeEach } from "../lib/domain/probe-all.js";
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

/** One model's probe, asked of the server (which stores it) and written into the cached model list the rows and Launch read. */
async function probeAndKeep(client: QueryClient, agent: string | undefined, model: string, signal?: AbortSignal): Promise<OllamaProbe> {
  const { outcome, detail, checkedAt } = await ollamaApi.probe({ model, ...(agent ? { agent } : {}) }, signal);
  const probe = { outcome, detail, checkedAt };
  client.setQueryData<OllamaModelList>(queryKeys.ollama.models(agent ?? ""), (list) =>
    list ? { ...list, models: list.models.map((m) => (m.name === model ? { ...m, probe } : m)) } : list,
  );
  return probe;
}

/** Checks whether a model calls tools and writes the outcome into the cached model list. */
export function useProbeModel(model: string, agent: string | undefined) {
  const client = useQueryClient();
  return useMutation({ mutationFn: () => probeAndKeep(client, agent, model) });
}

/**
 * Probes the given models one after another, each result in the list as it comes. `stop` drops the
 * question being asked and asks no more; leaving the page or choosing another server stops it too.
 */
export function useProbeAll(agent: string | undefined) {
  const client = useQueryClient();
  const [run, setRun] = useState<ProbeAllRun | null>(null);
  const running = useRef<AbortController | null>(null);
  useEffect(() => {
    setRun(null);
    return () => {
      running.current?.abort();
      running.current = null;
    };
  }, [agent]);
  const start = useCallback(
    (models: string[]) => {
      running.current?.abort();
      const controller = new AbortController();
      running.current = controller;
      void probeEach(
        models,
        (model, signal) => probeAndKeep(client, agent, model, signal),
        controller.signal,
        (next) => {
          // A run replaced or left behind no longer speaks for the page.
          if (running.current === controller) setRun(next);
        },
      );
    },
    [agent, client],
  );
  const stop = useCallback(() => running.current?.abort(), []);
  return { run, start, stop };
}
