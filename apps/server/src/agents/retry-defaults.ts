import type { RetryPolicy } from "@corral/shared";

/** Rate limits, quotas and overloads as the CLIs and their APIs word them. */
export const TRANSIENT_OUTPUT_PATTERNS = [
  "rate.?limit",
  "too many requests",
  "\\b429\\b",
  "quota",
  "resource.?exhausted",
  "overloaded",
  "\\b503\\b",
  "temporarily unavailable",
];

/** Built-in CLI agents retry what looks transient, twice, waiting 10 s then 20 s. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 3,
  exitCodes: [],
  outputPatterns: TRANSIENT_OUTPUT_PATTERNS,
  backoffS: 10,
};
