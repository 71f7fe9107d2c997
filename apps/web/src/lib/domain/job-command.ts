import type { AgentWithAvailability, Job } from "@corral/shared";
import { shellQuote } from "../format/format.js";

/** What a job page's Command card can truthfully say, in every state of the job. */
export type CommandCard =
  /** The exact command line the worker ran (or runs), ready to paste into a shell. */
  | { kind: "command"; line: string; cwd: string }
  /** Not started yet; `unavailable` says why it will not start as things stand (its CLI is missing). */
  | { kind: "waiting"; unavailable: string | null }
  /** The agent runs inside the server (Ollama's tool loop): there is no command line. */
  | { kind: "in-process"; server: string | null }
  /** It ended without a worker ever starting; `hint` is how to make the agent's CLI available. */
  | { kind: "not-started"; reason: string; hint: string | null };

export function commandCard(job: Job, agent: AgentWithAvailability | undefined): CommandCard {
  if (job.invocation) {
    return { kind: "command", line: [job.invocation.command, ...job.invocation.args].map(shellQuote).join(" "), cwd: job.invocation.cwd };
  }
  const missing = agent && !agent.availability.available ? agent.availability.hint : null;
  if (job.status === "queued") return { kind: "waiting", unavailable: missing };
  // A CLI worker's command line is stored with its start: started without one, it ran in-process.
  if (job.startedAt !== null) return { kind: "in-process", server: agent?.baseUrl ?? agent?.availability.resolved ?? null };
  if (job.status === "cancelled") return { kind: "not-started", reason: "It was cancelled before its worker started.", hint: null };
  if (missing)
    return { kind: "not-started", reason: `The worker never started: the ${job.agent} CLI is not available on this server.`, hint: missing };
  return { kind: "not-started", reason: "The worker never started; the error above says why.", hint: null };
}
