import type { EndedAnswers } from "./ended-answers.js";
import type { ReissuedCalls } from "./reissued-calls.js";

/** What every server instance of the mounts shares: kept answers, and launches waiting for their call to come again. */
export interface McpShared {
  answers: EndedAnswers;
  reissues: ReissuedCalls;
}
