import { createHash } from "node:crypto";

/** How long a launch whose answer never reached its client waits for the call to come again. */
export const REISSUE_WINDOW_MS = 10 * 60_000;
/** Launches kept waiting at once; the oldest is let go of first. */
const MAX_KEPT = 1000;

/**
 * Launches whose answer never reached the client: the stream of the `_run` (or `_run_async`)
 * that started the job closed first. A 2026-07-28 client whose stream drops re-issues the
 * request, and a 2025-11-25 client may call again; the same call (same tool and arguments,
 * from the same caller) within `REISSUE_WINDOW_MS` then takes that job instead of launching a second one.
 * Only a call whose answer was lost is taken over: two identical calls that both get their
 * answers are two jobs, as asked. Kept in memory: after a restart a re-issued call launches.
 */
export class ReissuedCalls {
  private kept = new Map<string, { jobId: string; at: number }>();

  /** The key of a call: what makes two calls the same one. `caller`: who made it (agent-tools' callerOf). */
  static keyOf(tool: string, args: unknown, caller: string): string {
    return createHash("sha256")
      .update(JSON.stringify([tool, canonical(args), caller]))
      .digest("base64url");
  }

  /** The call's answer was lost: its job waits for the call to come again. */
  lost(key: string, jobId: string, now = Date.now()): void {
    this.kept.delete(key);
    this.kept.set(key, { jobId, at: now });
    if (this.kept.size > MAX_KEPT) this.kept.delete(this.kept.keys().next().value as string);
  }

  /** The job a call with this key started and lost the answer of, taken (once); undefined if none. */
  take(key: string, now = Date.now()): string | undefined {
    const kept = this.kept.get(key);
    if (!kept) return undefined;
    this.kept.delete(key);
    return now - kept.at <= REISSUE_WINDOW_MS ? kept.jobId : undefined;
  }
}

/** A JSON value with every object's keys sorted, so that key order does not make two calls differ. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
  );
}
