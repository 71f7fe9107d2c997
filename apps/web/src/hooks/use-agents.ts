import type { CreateAgentBody, UpdateAgentBody } from "@corral/shared";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { agentsApi } from "../api/agents.js";
import { queryKeys } from "../lib/transport/query-keys.js";

export function useAgents() {
  return useQuery({ queryKey: queryKeys.agents.all, queryFn: ({ signal }) => agentsApi.list(signal), staleTime: 10_000 });
}

/** The kinds the server runs, each with its agents' form; they change only with the server, so they are asked once. */
export function useAgentKinds() {
  return useQuery({ queryKey: queryKeys.agentKinds, queryFn: ({ signal }) => agentsApi.kinds(signal), staleTime: Number.POSITIVE_INFINITY });
}

/** Whether an agent's models are an Ollama server's, as its kind says; false until the kinds are known. */
export function useListsOllamaModels(): (agent: { kind: string } | undefined) => boolean {
  const kinds = useAgentKinds();
  return (agent) => agent !== undefined && kinds.data?.some((k) => k.kind === agent.kind && k.ollamaModels) === true;
}

export function useAgentMutations() {
  const client = useQueryClient();
  const done = () => {
    void client.invalidateQueries({ queryKey: queryKeys.agents.all });
    void client.invalidateQueries({ queryKey: queryKeys.connect });
  };
  return {
    create: useMutation({ mutationFn: (body: CreateAgentBody) => agentsApi.create(body), onSuccess: done }),
    update: useMutation({ mutationFn: ({ name, body }: { name: string; body: UpdateAgentBody }) => agentsApi.update(name, body), onSuccess: done }),
    remove: useMutation({ mutationFn: (name: string) => agentsApi.remove(name), onSuccess: done }),
  };
}
