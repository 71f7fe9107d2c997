import { EventEmitter } from "node:events";
import type { HubAgent, HubMessage, HubMessagePage, HubSessionSummary } from "@corral/shared";
import type { AgentService } from "../agents/service.js";
import type { NewHubMessage } from "../db/registry.js";
import type { Registry } from "../db/registry.js";
import { inUnit, type Unit } from "../db/unit.js";
import type { HubMessageRow } from "../db/schema.js";
import type { JobParts } from "../jobs/parts.js";
import { notFound, ServiceError } from "../lib/errors.js";
import type { HubMember } from "./hub-member.js";
import { WorkerRelay } from "./worker-relay.js";

/** What one hub holds at most; each refusal says which limit it hit. */
export const HUB_LIMITS = {
  /** Messages waiting in one agent's inbox. */
  inbox: 1000,
  /** Names one session keeps (online or not); the longest-gone one with an empty inbox makes room. */
  agentsPerSession: 100,
  /** Receives waiting at once over the whole server (each agent waits in at most one). */
  waiting: 1000,
  /** Messages one receive takes, and their characters (past the first message). */
  receiveMessages: 100,
  receiveChars: 1_000_000,
  /** Sessions a listing shows. */
  sessionsListed: 200,
} as const;

export interface HubEvents {
  /** A message was stored. */
  message: [HubMessage];
  /** A session's agents changed (one registered, left or went offline). */
  agents: [session: string];
}

export interface HubDeps extends Pick<JobParts, "jobs" | "launches" | "output" | "jobEvents"> {
  registry: Registry;
  agents: AgentService;
}

const memberKey = (session: string, name: string) => `${session}\n${name}`;

export const toHubMessage = (row: HubMessageRow): HubMessage => ({
  id: row.id,
  session: row.session,
  from: row.from,
  to: row.to,
  text: row.text,
  jobId: row.jobId,
  at: row.at,
});

/**
 * Agents that message each other. Clients register under a name in a session and live as long
 * as their registration (an MCP session, a REST key); messages are stored before anyone hears of
 * them, so an inbox outlives its reader: a name that registers again finds what was sent to it.
 * Nothing of one session is reachable from another.
 */
export class ConversationHub extends EventEmitter<HubEvents> {
  private live = new Map<string, HubMember>();
  private waiting = 0;
  private readonly relay: WorkerRelay;

  constructor(private readonly deps: HubDeps) {
    super();
    this.setMaxListeners(0);
    this.relay = new WorkerRelay({ ...deps, store: (unit, row) => this.store(unit, row) });
  }

  private get repo() {
    return this.deps.registry.conversations;
  }

  /** At start: registrations died with the last server's sessions; answers still owed are awaited again. */
  async recover(): Promise<void> {
    await this.repo.endAll(Date.now());
    await this.relay.recover();
  }

  close(): void {
    this.relay.close();
    for (const member of [...this.live.values()]) void this.leave(member);
  }

  async register(session: string, name: string, label: string | null, door: HubMember["door"]): Promise<HubMember> {
    if ((await this.deps.agents.list()).some((a) => a.name === name)) {
      throw new ServiceError(`${name} is one of Corral's agents; choose another name`, 409, "name", undefined, "conflict");
    }
    const key = memberKey(session, name);
    if (this.live.has(key)) {
      throw new ServiceError(`the name ${name} is taken in session ${session} by an agent that is connected; choose another name`, 409, "name");
    }
    const now = Date.now();
    const member: HubMember = { session, name, door, label, registeredAt: now, lastSeenAt: now, ended: false, wake: null, delivered: 0 };
    // Held while it is stored: the same name registering meanwhile finds it taken.
    this.live.set(key, member);
    try {
      // Room counted and taken in one transaction.
      await this.deps.registry.transaction(async ({ conversations }) => {
        if (
          !(await conversations.agent(session, name)) &&
          (await conversations.agentCount(session)) >= HUB_LIMITS.agentsPerSession &&
          !(await conversations.forgetOldestIdle(session))
        ) {
          throw new ServiceError(
            `session ${session} has ${HUB_LIMITS.agentsPerSession} agents, each online or with messages waiting; use another session`,
            409,
            "session",
          );
        }
        await conversations.register({ session, name, label, registeredAt: now, lastSeenAt: now });
      });
    } catch (err) {
      this.live.delete(key);
      throw err;
    }
    this.emit("agents", session);
    return member;
  }

  /**
   * The registration ends (its client left, its session expired): a receive it waits in ends with
   * nothing. Resolves once that is stored (never rejects: at shutdown the next start ends it anyway).
   */
  leave(member: HubMember): Promise<void> {
    if (member.ended) return Promise.resolve();
    member.ended = true;
    member.wake?.();
    this.live.delete(memberKey(member.session, member.name));
    return this.repo.end(member.session, member.name, Date.now(), member.lastSeenAt).then(
      () => {
        this.emit("agents", member.session);
      },
      () => {
        // The registry is closing with the server: the next start ends every registration anyway.
      },
    );
  }

  /** A call of the member's: it was heard from now. */
  seen(member: HubMember): void {
    if (member.ended) throw new ServiceError(`the registration of ${member.name} in ${member.session} has ended; register again`, 409, "name");
    member.lastSeenAt = Date.now();
  }

  /** Registered clients (online or not), then Corral's enabled agents. */
  async agents(session: string): Promise<HubAgent[]> {
    const clients = (await this.repo.agents(session)).map((row): HubAgent => {
      const member = this.live.get(memberKey(session, row.name));
      return {
        session,
        name: row.name,
        kind: "client",
        label: row.label,
        online: member !== undefined,
        registeredAt: row.registeredAt,
        lastSeenAt: member?.lastSeenAt ?? row.lastSeenAt,
      };
    });
    const { agents } = this.deps;
    const workers = (await agents.withAvailability((await agents.list()).filter((a) => a.enabled))).map(
      (a): HubAgent => ({
        session,
        name: a.name,
        kind: "worker",
        label: a.description || `${a.kind} worker`,
        online: a.availability.available,
        registeredAt: null,
        lastSeenAt: null,
      }),
    );
    return [...clients, ...workers.filter((w) => !clients.some((c) => c.name === w.name))];
  }

  /**
   * Sends as `from`: into a client's inbox (held while it is offline), or to a worker as a job
   * whose answer comes back as a message. A name the session does not know is not found.
   */
  async send(from: HubMember, to: string, text: string): Promise<HubMessage> {
    this.seen(from);
    const { session } = from;
    // The inbox counted and the message stored in one transaction.
    const toClient = await inUnit(this.deps.registry, async (unit) => {
      if (!(await unit.tx.conversations.agent(session, to))) return null;
      if ((await unit.tx.conversations.inboxCount(session, to)) >= HUB_LIMITS.inbox) {
        throw new ServiceError(`the inbox of ${to} is full (${HUB_LIMITS.inbox} messages waiting); wait for it to receive`, 409, "to");
      }
      return this.store(unit, { session, from: from.name, to, text, at: Date.now() });
    });
    if (toClient) return toClient;
    if (await this.deps.agents.isEnabled(to)) return this.relay.ask(from, to, text);
    throw notFound(`no agent named ${to} in session ${session}; list them with corral_agents`, "to");
  }

  /**
   * The member's waiting messages, oldest first; when there are none, waits up to `timeoutMs`
   * for one. Empty at the timeout, when `signal` aborts, or when the registration ends.
   */
  async receive(member: HubMember, timeoutMs: number, signal?: AbortSignal): Promise<HubMessage[]> {
    this.seen(member);
    // A call already given up takes nothing: its answer would go nowhere.
    if (signal?.aborted) return [];
    for (;;) {
      const delivered = member.delivered;
      const ready = await this.take(member);
      if (ready.length || timeoutMs === 0 || member.ended) return ready;
      // A message stored while the inbox was read is taken now rather than waited for.
      if (member.delivered === delivered) break;
    }
    if (member.wake) throw new ServiceError(`${member.name} is already waiting for a message in another receive`, 409, "name");
    if (this.waiting >= HUB_LIMITS.waiting) {
      throw new ServiceError(`${HUB_LIMITS.waiting} receives are waiting already; try again later`, 503, undefined, undefined, "unavailable");
    }
    this.waiting++;
    return new Promise((resolve, reject) => {
      const finish = (take: boolean) => {
        if (member.wake !== wake) return;
        member.wake = null;
        this.waiting--;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        if (take && !member.ended) this.take(member).then(resolve, reject);
        else resolve([]);
      };
      const wake = () => finish(true);
      const onAbort = () => finish(false);
      member.wake = wake;
      const timer = setTimeout(() => finish(false), timeoutMs);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** The session's messages after `cursor` (those from or to `agent` when given), oldest first. */
  async read(session: string, agent: string | undefined, cursor: number, limit: number): Promise<HubMessagePage> {
    const rows = await this.repo.read(session, agent, cursor, limit);
    return { messages: rows.map(toHubMessage), cursor: rows.at(-1)?.id ?? cursor };
  }

  /** Whether the session knows the name: a registered client or one of Corral's enabled agents. */
  async knows(session: string, name: string): Promise<boolean> {
    return (await this.repo.agent(session, name)) !== undefined || (await this.deps.agents.isEnabled(name));
  }

  /** The sessions with agents online first, then the latest active, at most `HUB_LIMITS.sessionsListed`. */
  async sessions(): Promise<HubSessionSummary[]> {
    const online = new Map<string, number>();
    for (const m of this.live.values()) online.set(m.session, (online.get(m.session) ?? 0) + 1);
    return (await this.repo.sessions())
      .map((s) => ({ ...s, online: online.get(s.name) ?? 0 }))
      .sort((a, b) => Number(b.online > 0) - Number(a.online > 0) || (b.lastMessageAt ?? 0) - (a.lastMessageAt ?? 0) || a.name.localeCompare(b.name))
      .slice(0, HUB_LIMITS.sessionsListed);
  }

  /** Stores a message in the unit's transaction; who waits for it is told once that has committed. */
  private async store(unit: Unit, row: NewHubMessage): Promise<HubMessage> {
    const message = toHubMessage(await unit.tx.conversations.insertMessage(row));
    unit.afterCommit(() => {
      this.emit("message", message);
      const member = this.live.get(memberKey(message.session, message.to));
      if (!member) return;
      member.delivered++;
      member.wake?.();
    });
    return message;
  }

  /** Takes what waits in the member's inbox, as much as one answer carries: read and marked in one transaction. */
  private take(member: HubMember): Promise<HubMessage[]> {
    return this.deps.registry.transaction(async (tx) => {
      const rows = await tx.conversations.inbox(member.session, member.name, HUB_LIMITS.receiveMessages);
      // In order, and never past the character cap unless one message alone is larger.
      const kept: HubMessageRow[] = [];
      let chars = 0;
      for (const row of rows) {
        chars += row.text.length;
        if (kept.length && chars > HUB_LIMITS.receiveChars) break;
        kept.push(row);
      }
      await tx.conversations.markReceived(
        kept.map((r) => r.id),
        Date.now(),
      );
      return kept.map(toHubMessage);
    });
  }
}
