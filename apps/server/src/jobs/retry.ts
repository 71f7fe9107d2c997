import type { RetryPolicy } from "@corral/shared";

/**
 * Why a failed attempt should be tried again, or null. Only plain failures qualify: a cancel,
 * timeout or budget stop is never retried.
 */
export function retryReason(policy: RetryPolicy | null, attempt: number, exitCode: number | null, outputTail: string): string | null {
  if (!policy || attempt >= policy.maxAttempts) return null;
  if (exitCode !== null && policy.exitCodes.includes(exitCode)) return `exit code ${exitCode}`;
  for (const pattern of policy.outputPatterns) {
    if (new RegExp(pattern, "i").test(outputTail)) return `output matched /${pattern}/`;
  }
  return null;
}

/** Wait before attempt `next` (2, 3, …): backoffS, doubling each time. */
export function backoffMs(policy: RetryPolicy, next: number): number {
  return policy.backoffS * 1000 * 2 ** Math.max(0, next - 2);
}
