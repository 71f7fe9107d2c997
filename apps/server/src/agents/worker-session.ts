import { badInput } from "../lib/errors.js";
import type { JobSpec } from "./types.js";

/** Claude Code's `session_id`, Gemini CLI's `session_id` and Codex's `thread_id` are UUIDs. */
export const UUID = /^[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$/i;

export { OPENCODE_SESSION_ID as OPENCODE_SESSION } from "@corral/shared";

/**
 * A session id read from a worker's output, kept only when it has its CLI's shape: whatever a
 * worker prints is untrusted, and this id is later put on a command line and into file paths.
 */
export function sessionIdOf(value: unknown, shape: RegExp): string | undefined {
  return typeof value === "string" && shape.test(value) ? value : undefined;
}

/**
 * The session a follow-up job resumes, or undefined for a fresh job. The id came from an earlier
 * worker's output, so it is checked again against its CLI's shape before it reaches a command line:
 * an id such as `latest`, `3` or `--help` would resume another conversation or read as an option.
 * A follow-up without a usable id is refused, never run as a fresh conversation.
 */
export function resumedSession(spec: JobSpec, shape: RegExp): string | undefined {
  const followUp = spec.followUp;
  if (!followUp) return undefined;
  const id = followUp.workerSession;
  if (id === null) {
    throw badInput(`job ${followUp.jobId} cannot be continued: its ${spec.agent.kind} worker reported no session id`, "session");
  }
  if (!shape.test(id)) {
    throw badInput(`job ${followUp.jobId} cannot be continued: ${JSON.stringify(id.slice(0, 80))} is not a ${spec.agent.kind} session id`, "session");
  }
  return id;
}
