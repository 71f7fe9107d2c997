import type { JobAttemptRow } from "../db/schema.js";

/** The usage columns a job and each of its attempts have. */
export type UsageFields = Pick<JobAttemptRow, "usageModel" | "inputTokens" | "outputTokens" | "cachedInputTokens" | "costUsd" | "costSource">;

const USAGE_KEYS = ["usageModel", "inputTokens", "outputTokens", "cachedInputTokens", "costUsd", "costSource"] as const;

export const noUsage = (): UsageFields => ({
  usageModel: null,
  inputTokens: null,
  outputTokens: null,
  cachedInputTokens: null,
  costUsd: null,
  costSource: null,
});

/** The usage fields a patch sets (a patch leaves out what a report did not name). */
export function usageIn(patch: Partial<UsageFields>): Partial<UsageFields> {
  const out: Partial<UsageFields> = {};
  for (const key of USAGE_KEYS) if (patch[key] !== undefined) Object.assign(out, { [key]: patch[key] });
  return out;
}

export const usageOf = (row: UsageFields): UsageFields => ({ ...noUsage(), ...usageIn(row) });

const tokensOf = (u: UsageFields) => (u.inputTokens ?? 0) + (u.outputTokens ?? 0);

export const hasUsage = (u: UsageFields) => USAGE_KEYS.some((key) => u[key] !== null);

const sum = (values: (number | null)[]) => (values.some((v) => v !== null) ? values.reduce<number>((n, v) => n + (v ?? 0), 0) : null);

/**
 * A job's usage: its attempts' summed, since each one's tokens were spent and billed. Its cost is
 * unknown (null) when an attempt that used tokens has none, so an unpriced attempt is never
 * counted as free; it is `reported` only when every attempt's cost was.
 */
export function sumUsage(attempts: UsageFields[]): UsageFields {
  const unknown = attempts.some((a) => a.costUsd === null && tokensOf(a) > 0);
  const priced = attempts.filter((a) => a.costUsd !== null);
  const costUsd = unknown ? null : sum(priced.map((a) => a.costUsd));
  return {
    usageModel: attempts.findLast((a) => a.usageModel !== null)?.usageModel ?? null,
    inputTokens: sum(attempts.map((a) => a.inputTokens)),
    outputTokens: sum(attempts.map((a) => a.outputTokens)),
    cachedInputTokens: sum(attempts.map((a) => a.cachedInputTokens)),
    costUsd,
    costSource: costUsd === null ? null : priced.every((a) => a.costSource === "reported") ? "reported" : "estimated",
  };
}
