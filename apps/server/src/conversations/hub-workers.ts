import type { Agent } from "@corral/shared";
import { agentKindModule } from "../agents/kind-lookup.js";
import type { AgentService } from "../agents/service.js";
import { ServiceError } from "../lib/errors.js";

/**
 * Corral's agents as one hub session sees them. An agent limited to sessions (its `sessions`)
 * is in those only: from any other it is not listed and not reachable, as a name nobody has.
 * Its MCP tools (`<agent>_run`…) are not the hub's, and no session limits them.
 */

/** Whether the agent takes part in the session: its sessions name it, or name none (every session). */
export const takesPart = (agent: Pick<Agent, "sessions">, session: string): boolean =>
  agent.sessions.length === 0 || agent.sessions.includes(session);

/** The enabled agents that take part in the session. */
export async function sessionWorkers(agents: AgentService, session: string): Promise<Agent[]> {
  return (await agents.list()).filter((a) => a.enabled && takesPart(a, session));
}

/** The enabled agent of that name, if it takes part in the session. */
export async function sessionWorker(agents: AgentService, session: string, name: string): Promise<Agent | undefined> {
  return (await sessionWorkers(agents, session)).find((a) => a.name === name);
}

/** What pins the agent to one conversation of its worker, when it is not limited to the one hub session it can answer in; else null. */
function pinnedUnbound(agent: Agent): string | null {
  const pinned = agentKindModule(agent.kind)?.pinnedConversation?.(agent) ?? null;
  return pinned !== null && agent.sessions.length !== 1 ? pinned : null;
}

/** Whether a message to the worker gets an answer: it is not pinned to one conversation without being limited to one session. */
export const answersInHub = (agent: Agent): boolean => pinnedUnbound(agent) === null;

/**
 * An agent pinned to one conversation of its worker (an OpenCode server agent joining one of its
 * sessions) answers every sender there, so it answers in one hub session only: until it is limited
 * to one, a message to it is refused saying how, rather than mixing sessions in that conversation.
 */
export function assertAnswersHere(agent: Agent, session: string): void {
  const pinned = pinnedUnbound(agent);
  if (pinned === null) return;
  throw new ServiceError(
    `${agent.name} joins ${pinned}, so it answers in one hub session only, and is not limited to one: ` +
      `limit it to this one (sessions: [${session}], in the panel's agent form, PATCH /api/agents/${agent.name} or the config file), ` +
      "or unpin it so that each conversation gets a session of its own",
    409,
    "to",
    undefined,
    "conflict",
  );
}
