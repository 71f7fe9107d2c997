import { z } from "zod";

/**
 * When a failed attempt is tried again: its exit code is listed, or its output matches one of the
 * patterns (case-insensitive regular expressions, e.g. rate limits and quota errors).
 */
export const RetryPolicySchema = z
  .object({
    maxAttempts: z.number().int().min(1).max(10).describe("Attempts in all, the first included (1 = never retry)"),
    exitCodes: z.array(z.number().int().min(1).max(255)).max(50).default([]).describe("Exit codes that mean a transient failure"),
    outputPatterns: z
      .array(
        z
          .string()
          .min(1)
          .max(200)
          .refine((p) => {
            try {
              new RegExp(p, "i");
              return true;
            } catch {
              return false;
            }
          }, "not a valid regular expression"),
      )
      .max(50)
      .default([])
      .describe("Regular expressions; a failure whose output matches one is retried"),
    backoffS: z.number().min(0).max(3600).default(10).describe("Wait before the second attempt; doubles after each further failure"),
  })
  .strict();
export type RetryPolicy = z.infer<typeof RetryPolicySchema>;

/** The wait before attempt `next` (2, 3, …): backoffS, doubling each time. The server waits it; the panel counts it down. */
export function retryBackoffMs(policy: Pick<RetryPolicy, "backoffS">, next: number): number {
  return policy.backoffS * 1000 * 2 ** Math.max(0, next - 2);
}
