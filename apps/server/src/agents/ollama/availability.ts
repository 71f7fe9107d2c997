import type { AgentAvailability } from "@corral/shared";
import type { AppConfig } from "../../config.js";
import type { AgentRow } from "../../db/schema.js";
import { isUnreachable, ollamaClient, pullHint, sameModel, unreachableMessage } from "./client.js";
import { ollamaAgentModel, ollamaBaseUrl } from "./ollama.js";

/** Listing agents must stay quick even when a remote Ollama host is down. */
const AVAILABILITY_TIMEOUT_MS = 2_000;

/** Available when the server answers and has the agent's model. */
export async function ollamaAvailability(agent: AgentRow, config: AppConfig): Promise<AgentAvailability> {
  const baseUrl = ollamaBaseUrl(agent, config);
  const model = ollamaAgentModel(agent, config);
  try {
    const { models } = await ollamaClient(baseUrl, AbortSignal.timeout(AVAILABILITY_TIMEOUT_MS)).list();
    if (models.some((m) => sameModel(m.name, model))) return { available: true, resolved: `${baseUrl} (${model})`, hint: null, version: null };
    return { available: false, resolved: null, hint: pullHint(model), version: null };
  } catch (err) {
    const hint = isUnreachable(err)
      ? unreachableMessage(baseUrl, err)
      : `Ollama at ${baseUrl} did not list its models: ${err instanceof Error ? err.message : String(err)}`;
    return { available: false, resolved: null, hint, version: null };
  }
}
