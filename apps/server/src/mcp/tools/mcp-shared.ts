import type { HubLinks } from "../hub-link.js";
import type { EndedAnswers } from "./ended-answers.js";
import type { ReissuedCalls } from "./reissued-calls.js";

/**
 * What every server instance of the mounts shares: kept answers, launches waiting for their call
 * to come again, and what ties hub registrations to the 2025-11-25 session they came through.
 */
export interface McpShared {
  answers: EndedAnswers;
  reissues: ReissuedCalls;
  hubLinks: HubLinks;
}
