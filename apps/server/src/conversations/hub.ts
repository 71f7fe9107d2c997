import { EventEmitter } from "node:events";
import type { HubAgent, HubMessage, HubMessagePage, HubServer, HubSessionSummary, JobOrigin } from "@corral/shared";
import type { AgentService } from "../agents/service.js";
import type { NewHubMessage } from "../db/registry.js";
import type { Registry } from "../db/registry.js";
import { inUnit, type Unit } from "../db/unit.js";
import type { HubAgentRow, HubMessageRow } from "../db/schema.js";
import type { JobParts } from "../jobs/parts.js";
import { notFound, ServiceError } from "../lib/errors.js";
import { handleHash, mintHandle } from "./handles.js";
import type { HubMember } from "./hub-member.js";
import { answersInHub, assertAnswersHere, sessionWorker, sessionWorkers, takesPart } from "./hub-workers.js";
import { LiveRelay } from "./live-relay.js";
import { checkTarget, type LiveTarget, targetOf } from "./live-target.js";
import { PresenceHolds } from "./presence.js";
import { WorkerRelay } from "./worker-relay.js";

/** The door a call came through: the origin of the jobs its messages to workers start. */
export type HubDoor = Exclude<JobOrigin, "panel">;

/** Online: its handle lives and its client was seen within its presence (CORRAL_HUB_PRESENCE_S). */
const isOnline = (row: HubAgentRow, now: number) => row.endedAt === null && (row.leaseUntil ?? 0) > now;

const nameTaken = (session: string, name: string) =>
  new ServiceError(
    `the name ${name} is taken in session ${session} by a registration that is online; choose another name, pass its handle to replace it, or wait for it to go offline (CORRAL_HUB_PRESENCE_S after its client was last seen)`,
    409,
    "name",
  );

/** How often presence is renewed and checked: a fraction of it, so a held registration never lapses between ticks. */
const presenceTickMs = (presenceMs: number) => Math.max(200, Math.min(15_000, Math.floor(presenceMs / 4)));

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
  /** A registration's handle unused this long ends, with its name (CORRAL_HUB_LEASE_S). */
  leaseMs: number;
  /** A registration not seen this long is offline, and its name free to take (CORRAL_HUB_PRESENCE_S, at most leaseMs). */
  presenceMs: number;
  /** Registrations live at once over every session and door (CORRAL_HUB_MAX_REGISTRATIONS). */
  maxRegistrations: number;
  /** Corral's own port, which no registration's server may be. */
  port: number;
}

/** How the caller's door spells the handle: MCP tools take `handle`, REST bodies `key`. */
export type HandleField = "handle" | "key";

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

/** A message sent; `live`: it went into the recipient's own server (a live target), whose answer comes back as a message. */
export type HubSent = HubMessage & { live?: true };

/** A registration as corral_register and the REST register answer it: the handle is shown this once. */
export interface HubRegistered {
  member: HubMember;
  handle: string;
  row: HubAgentRow;
}

/**
 * Agents that message each other. Clients register under a name in a session and get a handle,
 * a secret their later calls carry (no protocol session: a 2026-07-28 MCP client has none).
 *
 * Two clocks, both kept in the registry so a restart keeps them. Presence (CORRAL_HUB_PRESENCE_S,
 * `leaseUntil`): a registration is online, and holds its name, while its client shows — a call
 * with the handle, a receive waiting, or the open event stream of the MCP session it registered
 * in (held through `holdPresence`) — and goes offline within that time of its client going away
 * (Claude Code and OpenCode never end their MCP session when they exit). The handle's lease
 * (CORRAL_HUB_LEASE_S, from `lastSeenAt`): the handle and its inbox stay valid while offline, so
 * a client that polls its inbox every few minutes comes back online with its next call — unless
 * a new registration took the name meanwhile, which ends the old handle.
 *
 * Messages are stored before anyone hears of them, so an inbox outlives its reader: a name that
 * registers again finds what was sent to it. Nothing of one session is reachable from another.
 */
export class ConversationHub extends EventEmitter<HubEvents> {
  /** Members this process has met since it started, by session and name: their wakers. */
  private live = new Map<string, HubMember>();
  /** Names being registered now: the same name meanwhile is taken, and each counts against the cap. */
  private registering = new Set<string>();
  private waiting = 0;
  private closed = false;
  private readonly relay: WorkerRelay;
  private readonly liveRelay: LiveRelay;
  private readonly sweeper: NodeJS.Timeout;
  private readonly holds = new PresenceHolds();
  /** Presence that ran out before this was checked by the last sweep already told. */
  private sweptAt = Date.now();
  private sweeping = false;

  constructor(private readonly deps: HubDeps) {
    super();
    this.setMaxListeners(0);
    this.relay = new WorkerRelay({ ...deps, store: (unit, row) => this.store(unit, row) });
    this.liveRelay = new LiveRelay({ registry: deps.registry, store: (unit, row) => this.store(unit, row) });
    this.sweeper = setInterval(() => void this.sweep(), presenceTickMs(deps.presenceMs)).unref();
  }

  /** Handles seen after this still live (CORRAL_HUB_LEASE_S). */
  private unusedSince(now: number): number {
    return now - this.deps.leaseMs;
  }

  private get repo() {
    return this.deps.registry.conversations;
  }

  /** At start: registrations whose lease ran out while the server was down end; answers still owed are awaited again. */
  async recover(): Promise<void> {
    const now = Date.now();
    this.ended(await this.repo.expire(now, this.unusedSince(now)));
    await this.relay.recover();
    await this.liveRelay.recover();
  }

  /** Stops this process's part (receives end with nothing); the registrations live on in the registry. */
  close(): void {
    this.closed = true;
    clearInterval(this.sweeper);
    this.relay.close();
    this.liveRelay.close();
    for (const member of this.live.values()) member.wake?.();
  }

  /**
   * Registers the name in the session with a new handle. `replaces`: the caller's handle of a
   * registration it holds, which ends in the same transaction (registering again under the same
   * name, or moving to another); one that no longer lives replaces nothing. `server`: the
   * registrant's own server, checked reachable now, into which messages to it go (live-target.ts).
   */
  async register(session: string, name: string, label: string | null, replaces?: string, server?: HubServer): Promise<HubRegistered> {
    if ((await this.deps.agents.list()).some((a) => a.name === name && takesPart(a, session))) {
      throw new ServiceError(`${name} is one of Corral's agents; choose another name`, 409, "name", undefined, "conflict");
    }
    const target: LiveTarget | undefined = server && (await checkTarget(server, { port: this.deps.port }));
    const key = memberKey(session, name);
    if (this.registering.has(key)) throw nameTaken(session, name);
    const { maxRegistrations, presenceMs } = this.deps;
    this.registering.add(key);
    try {
      const { handle, hash } = mintHandle();
      const now = Date.now();
      const row: HubAgentRow = {
        session,
        name,
        label,
        registeredAt: now,
        lastSeenAt: now,
        endedAt: null,
        handleHash: hash,
        leaseUntil: now + presenceMs,
        targetUrl: target?.url ?? null,
        targetSession: target?.session ?? null,
        targetPassword: target?.password ?? null,
      };
      // Expiry, the replaced registration's end, the checks and the row: one transaction.
      const gone = await this.deps.registry.transaction(async ({ conversations }) => {
        const expired = await conversations.expire(now, this.unusedSince(now));
        const replaced = replaces === undefined ? undefined : await conversations.end(handleHash(replaces), now);
        const existing = await conversations.agent(session, name);
        if (existing && isOnline(existing, now)) throw nameTaken(session, name);
        // A holder gone offline is taken over: its row becomes this registration's, so its handle ends.
        const takenOver = existing?.endedAt === null ? [existing] : [];
        // The others being registered are not visible to this transaction yet: they count too.
        if ((await conversations.liveCount()) - takenOver.length + this.registering.size > maxRegistrations) {
          throw new ServiceError(
            `${maxRegistrations} conversation registrations are live already (CORRAL_HUB_MAX_REGISTRATIONS); ` +
              "leave one, wait for one to go unused for CORRAL_HUB_LEASE_S, or raise CORRAL_HUB_MAX_REGISTRATIONS",
            503,
            undefined,
            undefined,
            "unavailable",
          );
        }
        if (
          !existing &&
          (await conversations.agentCount(session)) >= HUB_LIMITS.agentsPerSession &&
          !(await conversations.forgetOldestIdle(session))
        ) {
          throw new ServiceError(
            `session ${session} has ${HUB_LIMITS.agentsPerSession} agents, each online or with messages waiting; use another session`,
            409,
            "session",
          );
        }
        await conversations.register(row);
        return [...expired, ...(replaced ? [replaced] : []), ...takenOver];
      });
      this.ended(gone);
      const member = this.known(session, name, hash);
      member.presentUntil = row.leaseUntil ?? now;
      this.emit("agents", session);
      return { member, handle, row };
    } finally {
      this.registering.delete(key);
    }
  }

  /**
   * The live registration with this handle, as a call of its own: the call renews its lease and
   * makes it online (again). A handle never given, ended, unused for the lease, or whose name
   * another registration took while it was offline is refused naming the field it came in.
   */
  async member(handle: string, field: HandleField = "handle"): Promise<HubMember> {
    const hash = handleHash(handle);
    const now = Date.now();
    const row = await this.repo.touch(hash, now, now + this.deps.presenceMs, this.unusedSince(now));
    if (!row) {
      const again = field === "handle" ? "corral_register" : "POST /api/conversations/<session>/agents";
      throw notFound(
        `no live registration has this ${field}: it was never given, it left or registered again, it went unused for CORRAL_HUB_LEASE_S, or another registration took its name while it was offline; register again with ${again} and use the ${field} it answers`,
        field,
      );
    }
    const member = this.known(row.session, row.name, hash);
    this.seen([member], now);
    return member;
  }

  /**
   * Keeps the member online while its client holds something open (the MCP session's event
   * stream it registered in); the release lets it lapse within CORRAL_HUB_PRESENCE_S.
   */
  holdPresence(member: HubMember): () => void {
    return this.holds.hold(member);
  }

  /**
   * The stream that held the member closed. A registration with a live target goes offline at once
   * unless something else still holds it: its window is likely gone, and within its presence
   * another process could take the port and be sent its password and messages. The same session's
   * stream coming back brings it online again on the next tick.
   */
  letGo(member: HubMember): void {
    if (member.ended || this.closed || this.holds.isHeld(member)) return;
    const now = Date.now();
    this.repo
      .lapseLive(member.hash, now)
      .then((lapsed) => {
        if (!lapsed) return;
        member.presentUntil = Math.min(member.presentUntil, now);
        this.emit("agents", member.session);
      })
      .catch(() => undefined);
  }

  /**
   * Pushes each message stored for the member to `push` (its client's open stream), oldest
   * first, marking received only those it wrote; what it could not write stays in the inbox for
   * the next push or receive. Pushes at once what waits already. The answer detaches it.
   */
  attachPush(member: HubMember, push: (message: HubMessage) => boolean): () => void {
    member.push = push;
    void this.pushInbox(member);
    return () => {
      if (member.push === push) member.push = null;
    };
  }

  /** The registration ends (REST leave): a receive it waits in ends with nothing. */
  async leave(member: HubMember): Promise<void> {
    this.forget(member);
    const ended = await this.repo.end(member.hash, Date.now());
    if (ended) this.emit("agents", ended.session);
  }

  /** Registered clients (online or not, with when each was last seen), then Corral's enabled agents that take part in the session. */
  async agents(session: string): Promise<HubAgent[]> {
    const now = Date.now();
    const clients = (await this.repo.agents(session)).map(
      (row): HubAgent => ({
        session,
        name: row.name,
        kind: "client",
        label: row.label,
        online: isOnline(row, now),
        registeredAt: row.registeredAt,
        lastSeenAt: row.lastSeenAt,
        liveAt: isOnline(row, now) ? (targetOf(row)?.url ?? null) : null,
      }),
    );
    const { agents } = this.deps;
    const workers = (await agents.withAvailability(await sessionWorkers(agents, session))).map(
      (a): HubAgent => ({
        session,
        name: a.name,
        kind: "worker",
        label: a.description || `${a.kind} worker`,
        online: a.availability.available && answersInHub(a),
        registeredAt: null,
        lastSeenAt: null,
        liveAt: null,
      }),
    );
    return [...clients, ...workers.filter((w) => !clients.some((c) => c.name === w.name))];
  }

  /**
   * Sends as `from`: into a client's inbox (held while it is offline), or into its own server's
   * session while it lives with one (a live target), or to a worker as a job; the answers of the
   * last two come back as messages. A name the session does not know is not found.
   */
  async send(from: HubMember, to: string, text: string, door: HubDoor): Promise<HubSent> {
    const { session } = from;
    // The inbox counted and the message stored in one transaction.
    const toClient = await inUnit(this.deps.registry, async (unit) => {
      const recipient = await unit.tx.conversations.agent(session, to);
      if (!recipient) return null;
      const target = isOnline(recipient, Date.now()) ? targetOf(recipient) : undefined;
      if (target) return { ...(await this.liveRelay.ask(from, to, target, text, unit)), live: true as const };
      if ((await unit.tx.conversations.inboxCount(session, to)) >= HUB_LIMITS.inbox) {
        throw new ServiceError(`the inbox of ${to} is full (${HUB_LIMITS.inbox} messages waiting); wait for it to receive`, 409, "to");
      }
      return this.store(unit, { session, from: from.name, to, text, at: Date.now() });
    });
    if (toClient) return toClient;
    const worker = await sessionWorker(this.deps.agents, session, to);
    if (worker) {
      assertAnswersHere(worker, session);
      return this.relay.ask(from, to, text, door);
    }
    throw notFound(`no agent named ${to} in session ${session}; list them with corral_agents`, "to");
  }

  /**
   * The member's waiting messages, oldest first; when there are none, waits up to `timeoutMs`
   * for one. Empty at the timeout, when `signal` aborts, or when the registration ends.
   */
  async receive(member: HubMember, timeoutMs: number, signal?: AbortSignal): Promise<HubMessage[]> {
    // A call already given up takes nothing: its answer would go nowhere.
    if (signal?.aborted) return [];
    for (;;) {
      const delivered = member.delivered;
      const ready = await this.take(member);
      if (ready.length || timeoutMs === 0 || member.ended) return ready;
      // A message stored while the inbox was read is taken now rather than waited for.
      if (member.delivered === delivered) break;
    }
    if (member.wake) throw new ServiceError(`${member.name} is already waiting for a message in another receive`, 409, "handle");
    if (this.waiting >= HUB_LIMITS.waiting) {
      throw new ServiceError(`${HUB_LIMITS.waiting} receives are waiting already; try again later`, 503, undefined, undefined, "unavailable");
    }
    this.waiting++;
    // A receive in progress is its client showing: held online for the whole wait, seen again at its end.
    const release = this.holds.hold(member);
    return new Promise((resolve, reject) => {
      const finish = (take: boolean) => {
        if (member.wake !== wake) return;
        member.wake = null;
        this.waiting--;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        release();
        if (!this.closed) {
          const now = Date.now();
          this.repo.touch(member.hash, now, now + this.deps.presenceMs, this.unusedSince(now)).catch(() => undefined);
        }
        if (take && !member.ended && !this.closed) this.take(member).then(resolve, reject);
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

  /** Whether the session knows the name: a registered client or one of Corral's enabled agents that takes part in it. */
  async knows(session: string, name: string): Promise<boolean> {
    return (await this.repo.agent(session, name)) !== undefined || (await sessionWorker(this.deps.agents, session, name)) !== undefined;
  }

  /** The sessions with agents online first, then the latest active, at most `HUB_LIMITS.sessionsListed`. */
  async sessions(): Promise<HubSessionSummary[]> {
    return (await this.repo.sessions(Date.now()))
      .sort((a, b) => Number(b.online > 0) - Number(a.online > 0) || (b.lastMessageAt ?? 0) - (a.lastMessageAt ?? 0) || a.name.localeCompare(b.name))
      .slice(0, HUB_LIMITS.sessionsListed);
  }

  /** The member with this handle hash as this process knows it: met before, or made now (after a restart, a registration). */
  private known(session: string, name: string, hash: string): HubMember {
    const key = memberKey(session, name);
    const met = this.live.get(key);
    if (met?.hash === hash && !met.ended) return met;
    // Held under a handle that no longer lives there (a registration that ended meanwhile).
    if (met) this.forget(met);
    const member: HubMember = {
      hash,
      session,
      name,
      ended: false,
      wake: null,
      delivered: 0,
      presentUntil: 0,
      push: null,
      inboxTurn: Promise.resolve(),
      pushing: false,
      pushAgain: false,
    };
    this.live.set(key, member);
    return member;
  }

  /** This process lets go of the member: a receive it waits in ends with nothing. */
  private forget(member: HubMember): void {
    member.ended = true;
    member.push = null;
    member.wake?.();
    const key = memberKey(member.session, member.name);
    if (this.live.get(key) === member) this.live.delete(key);
  }

  /** Registrations the registry ended (expired, replaced): forgotten here, their sessions told. */
  private ended(rows: Pick<HubAgentRow, "session" | "name">[]): void {
    const sessions = new Set<string>();
    for (const row of rows) {
      const member = this.live.get(memberKey(row.session, row.name));
      if (member) this.forget(member);
      sessions.add(row.session);
    }
    for (const session of sessions) this.emit("agents", session);
  }

  /** Members seen at `now`: online until now + presence; the sessions of those that were offline are told. */
  private seen(members: HubMember[], now: number): void {
    const back = new Set<string>();
    for (const member of members) {
      if (member.presentUntil <= now) back.add(member.session);
      member.presentUntil = now + this.deps.presenceMs;
    }
    for (const session of back) this.emit("agents", session);
  }

  /**
   * Each tick: held registrations renewed in one write, handles unused for their lease ended, and
   * the sessions of registrations that went offline since the last tick told.
   */
  private async sweep(): Promise<void> {
    if (this.sweeping || this.closed) return;
    this.sweeping = true;
    try {
      const now = Date.now();
      const held = this.holds.members();
      await this.repo.renew(
        held.map((m) => m.hash),
        now,
        now + this.deps.presenceMs,
      );
      this.seen(held, now);
      this.ended(await this.repo.expire(now, this.unusedSince(now)));
      const lapsed = await this.repo.lapsed(this.sweptAt, now);
      this.sweptAt = now;
      for (const session of new Set(lapsed.map((r) => r.session))) this.emit("agents", session);
    } catch {
      // The registry is unreachable or closing: the next sweep, or the next start, ends them.
    } finally {
      this.sweeping = false;
    }
  }

  /** Stores a message in the unit's transaction; who waits for it is told once that has committed. */
  private async store(unit: Unit, row: NewHubMessage): Promise<HubMessage> {
    const message = toHubMessage(await unit.tx.conversations.insertMessage(row));
    unit.afterCommit(() => {
      this.emit("message", message);
      const member = this.live.get(memberKey(message.session, message.to));
      if (!member) return;
      member.delivered++;
      if (member.push) void this.pushInbox(member);
      member.wake?.();
    });
    return message;
  }

  /** Runs `read` after the member's other inbox readers: a push and a receive never hand out the same message. */
  private inboxTurn<T>(member: HubMember, read: () => Promise<T>): Promise<T> {
    const turn = member.inboxTurn.then(read, read);
    member.inboxTurn = turn.catch(() => undefined);
    return turn;
  }

  /**
   * Pushes what waits in the member's inbox while it has a push: each message written is marked
   * received, the first that could not be written (and all after it) stays for later. One pass
   * at a time; a message stored meanwhile makes it run once more.
   */
  private async pushInbox(member: HubMember): Promise<void> {
    if (member.pushing) {
      member.pushAgain = true;
      return;
    }
    member.pushing = true;
    try {
      do {
        member.pushAgain = false;
        const more = await this.inboxTurn(member, async () => {
          const push = member.push;
          if (!push || member.ended || this.closed) return false;
          const rows = await this.repo.inbox(member.session, member.name, HUB_LIMITS.receiveMessages);
          const written: number[] = [];
          for (const row of rows) {
            if (member.push !== push || !push(toHubMessage(row))) break;
            written.push(row.id);
          }
          await this.repo.markReceived(written, Date.now());
          return written.length === HUB_LIMITS.receiveMessages;
        });
        if (more) member.pushAgain = true;
      } while (member.pushAgain);
    } catch {
      // The registry is unreachable: what was not marked stays in the inbox for the next push or receive.
    } finally {
      member.pushing = false;
    }
  }

  /** Takes what waits in the member's inbox, as much as one answer carries: read and marked in one transaction. */
  private take(member: HubMember): Promise<HubMessage[]> {
    return this.inboxTurn(member, () => this.takeNow(member));
  }

  private takeNow(member: HubMember): Promise<HubMessage[]> {
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
