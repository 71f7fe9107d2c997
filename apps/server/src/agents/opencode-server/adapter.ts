import type { AgentAvailability } from "@corral/shared";
import type { AppConfig } from "../../config.js";
import type { AgentRow } from "../../db/schema.js";
import type { InProcessAdapter, JobSpec } from "../types.js";
import { OpencodeClient, type SessionRef, serverAddress } from "./client.js";
import { runTurn } from "./turn.js";
import { OPENCODE_SESSION, resumedSession } from "../worker-session.js";

/** Listing agents must stay quick even when the OpenCode host is down. */
const AVAILABILITY_TIMEOUT_MS = 2_000;

/** The session an agent joins instead of starting its own: one the user already works in. */
const joinedSession = (agent: Pick<AgentRow, "env">) => agent.env.OPENCODE_SESSION_ID || undefined;

/** An agent that joins one session has every job of every sender there (the kind's `pinnedConversation`). */
export const pinnedSession = (agent: Pick<AgentRow, "env">): string | null =>
  joinedSession(agent) ? "one OpenCode session (OPENCODE_SESSION_ID in its env)" : null;

/** OpenCode names a model `provider/model`, and so does a job of this kind. */
function modelRef(model: string | null): { providerID: string; modelID: string } | undefined {
  if (!model) return undefined;
  const slash = model.indexOf("/");
  if (slash <= 0 || slash === model.length - 1)
    throw new Error(`model ${model} is not OpenCode's provider/model form (e.g. anthropic/claude-sonnet-4-5)`);
  return { providerID: model.slice(0, slash), modelID: model.slice(slash + 1) };
}

/**
 * The session a job posts into: a follow-up's is the one its earlier job used, so a message sent
 * to this agent in a conversation lands in the same OpenCode session; else the agent's joined
 * session; else a new one working in the job's workdir.
 */
async function sessionFor(client: OpencodeClient, spec: JobSpec, signal: AbortSignal): Promise<SessionRef> {
  // An id a runner or an earlier worker stored: it goes into a URL path, so it must have OpenCode's shape.
  const resumed = resumedSession(spec, OPENCODE_SESSION);
  if (resumed) return client.session(resumed, signal);
  const joined = joinedSession(spec.agent);
  if (joined) return client.session(joined, signal);
  return client.createSession(spec.workdir, `Corral job ${spec.jobId}`, signal);
}

/** Jobs of an OpenCode server agent: each is one message posted into a session of the running server. */
export function createOpencodeServerAdapter(config: AppConfig): InProcessAdapter {
  return {
    async run(spec, io) {
      const client = new OpencodeClient(serverAddress(spec.agent, config));
      const model = modelRef(spec.model);
      const session = await sessionFor(client, spec, io.signal);
      io.write("sys", `[opencode] session ${session.id} on ${client.baseUrl} (${session.directory})\n`);
      return runTurn({ client, session, prompt: spec.prompt, model, io });
    },
  };
}

/** Available when the server answers its health check (with the agent's password) and has the joined session, if one is named. */
export async function opencodeServerAvailability(agent: AgentRow, config: AppConfig): Promise<AgentAvailability> {
  try {
    const client = new OpencodeClient(serverAddress(agent, config));
    const signal = AbortSignal.timeout(AVAILABILITY_TIMEOUT_MS);
    const version = await client.health(signal);
    const joined = joinedSession(agent);
    if (joined) await client.session(joined, signal);
    return { available: true, resolved: `${client.baseUrl} (OpenCode ${version})`, hint: null, version };
  } catch (err) {
    const timedOut = err instanceof Error && err.name === "TimeoutError";
    const hint = timedOut ? `OpenCode at ${agent.baseUrl} did not answer in time` : err instanceof Error ? err.message : String(err);
    return { available: false, resolved: null, hint, version: null };
  }
}
