import type { RetryPolicy } from "@corral/shared";
import { LineMatcher } from "../lib/pattern-worker.js";

/**
 * How long one of a policy's output patterns may take on a failed attempt's output. The patterns
 * come from an agent's settings or a config file: they run off the event loop (lib/pattern-worker.ts),
 * and one that takes longer counts as not matching.
 */
export const RETRY_PATTERN_DEADLINE_MS = 2000;

/**
 * Why a failed attempt should be tried again, or null. Only plain failures qualify: a cancel,
 * timeout or budget stop is never retried.
 */
export async function retryReason(policy: RetryPolicy | null, attempt: number, exitCode: number | null, outputTail: string): Promise<string | null> {
  if (!policy || attempt >= policy.maxAttempts) return null;
  if (exitCode !== null && policy.exitCodes.includes(exitCode)) return `exit code ${exitCode}`;
  for (const pattern of policy.outputPatterns) {
    let matcher: LineMatcher | null = null;
    try {
      matcher = new LineMatcher(pattern, { deadlineMs: RETRY_PATTERN_DEADLINE_MS, flags: "i" });
      if (await matcher.test(outputTail)) return `output matched /${pattern}/`;
    } catch {
      // Too slow, too long (or the thread failed): not a reason to retry.
    } finally {
      matcher?.close();
    }
  }
  return null;
}
