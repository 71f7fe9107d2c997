import { z } from "zod";

export const JobStatusSchema = z.enum(["queued", "running", "succeeded", "failed", "cancelled", "timed_out", "budget_exceeded", "lost"]);
export type JobStatus = z.infer<typeof JobStatusSchema>;

export const FINAL_JOB_STATUSES: readonly JobStatus[] = ["succeeded", "failed", "cancelled", "timed_out", "budget_exceeded", "lost"];

export function isFinalStatus(status: JobStatus): boolean {
  return FINAL_JOB_STATUSES.includes(status);
}

/**
 * An agent kind names one of the server's agent modules (gemini, opencode, claude, codex, kiro,
 * command, ollama, and any added later); the server checks it against its registry.
 */
export const AgentKindSchema = z.string().regex(/^[a-z][a-z0-9_]{0,39}$/, "use 1-40 lowercase letters, digits or _, starting with a letter");
export type AgentKind = z.infer<typeof AgentKindSchema>;

/** How a CLI worker is confined: not at all, or in a bubblewrap sandbox (system read-only, workdir writable). */
export const SandboxModeSchema = z.enum(["none", "bwrap"]);
export type SandboxMode = z.infer<typeof SandboxModeSchema>;

export const JobOriginSchema = z.enum(["mcp", "rest", "panel"]);
export type JobOrigin = z.infer<typeof JobOriginSchema>;

/** Who asked for a job to be cancelled: one of the doors, or the server itself as it stopped (CORRAL_STOP_WORKERS_ON_EXIT). */
export const CancelSourceSchema = z.enum([...JobOriginSchema.options, "server"]);
export type CancelSource = z.infer<typeof CancelSourceSchema>;

export const OutputStreamSchema = z.enum(["out", "err", "sys"]);
export type OutputStream = z.infer<typeof OutputStreamSchema>;
