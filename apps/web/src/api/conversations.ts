import type { HubAgentList, HubSessionList } from "@corral/shared";
import { apiFetch } from "./client.js";

const sessionPath = (session: string) => `/api/conversations/${encodeURIComponent(session)}`;

export const conversationsApi = {
  sessions: (signal?: AbortSignal) => apiFetch<HubSessionList>("/api/conversations", { signal }).then((r) => r.sessions),
  agents: (session: string, signal?: AbortSignal) => apiFetch<HubAgentList>(`${sessionPath(session)}/agents`, { signal }).then((r) => r.agents),
};
