import type { CreateAgentBody, UpdateAgentBody } from "@corral/shared";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { agentsApi } from "../api/agents.js";
import { queryKeys } from "../lib/transport/query-keys.js";

export function useAgents() {
  return useQuery({ queryKey: queryKeys.agents.all, queryFn: ({ signal }) => agentsApi.list(signal), staleTime: 10_000 });
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
