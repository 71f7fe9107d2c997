import type { BrowserSession, BrowserSessionList } from "@corral/shared";
import { apiFetch } from "./client.js";

export const sessionsApi = {
  list: (signal?: AbortSignal) => apiFetch<BrowserSessionList>("/api/sessions", { signal }).then((r) => r.sessions),
  signOut: (id: BrowserSession["id"]) => apiFetch<void>(`/api/sessions/${encodeURIComponent(id)}`, { method: "DELETE" }),
  signOutEverywhere: () => apiFetch<{ revoked: number }>("/api/sessions", { method: "DELETE" }),
};
