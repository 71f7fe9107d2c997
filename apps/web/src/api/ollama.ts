import type { OllamaLastKnown, OllamaModel, OllamaModelList, OllamaProbe, OllamaProbeBody } from "@corral/shared";
import { apiFetch, queryString } from "./client.js";

export const ollamaApi = {
  models: (agent: string | undefined, signal?: AbortSignal) => apiFetch<OllamaModelList>(`/api/ollama/models${queryString({ agent })}`, { signal }),
  lastKnown: (agent: string | undefined, signal?: AbortSignal) =>
    apiFetch<OllamaLastKnown>(`/api/ollama/models/last-known${queryString({ agent })}`, { signal }),
  probe: (body: OllamaProbeBody, signal?: AbortSignal) =>
    apiFetch<OllamaProbe & { model: string; url: string }>("/api/ollama/probe", { method: "POST", body, signal }),
};

/** Whether a probe means anything: an embedding-only model cannot chat, so it cannot call a tool either. */
export const canProbe = (m: OllamaModel) => m.capabilities.includes("completion") || !m.capabilities.includes("embedding");

/** Tool-capable models first (probed ones before those whose template only mentions tools), then by name. */
export function modelsForLaunch(models: OllamaModel[]): OllamaModel[] {
  const rank = (m: OllamaModel) => (m.probe?.outcome === "calls_tools" ? 0 : m.tools ? 1 : m.capabilities.includes("embedding") ? 3 : 2);
  return [...models].sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name));
}
