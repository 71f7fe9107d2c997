import type { AgentAvailability } from "@corral/shared";
import type { AppConfig } from "../../config.js";
import type { AgentRow } from "../../db/schema.js";
import { apiBaseUrl, apiKey } from "./endpoint.js";

/** Listing agents must stay quick even when an API host is down. */
const AVAILABILITY_TIMEOUT_MS = 2_000;

const unavailable = (hint: string): AgentAvailability => ({ available: false, resolved: null, hint, version: null });

/** Available when its key variable is set and its base URL answers (any HTTP status: no key is sent to ask). */
export async function apiAvailability(agent: AgentRow, config: AppConfig): Promise<AgentAvailability> {
  let baseUrl: string;
  try {
    apiKey(agent, config);
    baseUrl = apiBaseUrl(agent);
  } catch (err) {
    return unavailable((err as Error).message);
  }
  try {
    const response = await fetch(baseUrl, { signal: AbortSignal.timeout(AVAILABILITY_TIMEOUT_MS) });
    await response.body?.cancel();
    return { available: true, resolved: `${baseUrl} (${agent.model ?? "model chosen at launch"})`, hint: null, version: null };
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    return unavailable(`${baseUrl} does not answer (${cause ?? (err as Error).message}); check the agent's baseUrl`);
  }
}
