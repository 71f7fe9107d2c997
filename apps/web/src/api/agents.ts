import type { AgentKindList, AgentWithAvailability, CreateAgentBody, UpdateAgentBody } from "@corral/shared";
import { apiFetch } from "./client.js";

export const agentsApi = {
  kinds: (signal?: AbortSignal) => apiFetch<AgentKindList>("/api/agent-kinds", { signal }).then((r) => r.kinds),
  list: (signal?: AbortSignal) => apiFetch<{ agents: AgentWithAvailability[] }>("/api/agents", { signal }).then((r) => r.agents),
  create: (body: CreateAgentBody) => apiFetch<AgentWithAvailability>("/api/agents", { method: "POST", body }),
  update: (name: string, body: UpdateAgentBody) =>
    apiFetch<AgentWithAvailability>(`/api/agents/${encodeURIComponent(name)}`, { method: "PATCH", body }),
  remove: (name: string) => apiFetch<void>(`/api/agents/${encodeURIComponent(name)}`, { method: "DELETE" }),
};
