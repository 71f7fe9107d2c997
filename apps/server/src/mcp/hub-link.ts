import { type HubMessage, isFinalStatus, type Job } from "@corral/shared";
import type { JSONRPCNotification } from "@modelcontextprotocol/server";
import type { ConversationHub } from "../conversations/hub.js";
import type { HubMember } from "../conversations/hub-member.js";
import type { JobEvents } from "../jobs/job-events.js";
import { jobLine } from "./tools/job-text.js";

/** Claude Code's channel: the server capability it looks for, and the notification it shows the model as a `<channel>` block. */
export const CLAUDE_CHANNEL = "claude/channel";
export const CLAUDE_CHANNEL_METHOD = "notifications/claude/channel";

/** Whether a client's initialize declared Claude Code's channel capability (`experimental["claude/channel"]`). */
export function clientTakesChannel(capabilities: { experimental?: Record<string, unknown> } | undefined): boolean {
  const declared = capabilities?.experimental?.[CLAUDE_CHANNEL];
  return typeof declared === "object" && declared !== null;
}

/** Registrations one session keeps track of (a client rarely holds more than one): the oldest bound is let go past it. */
const BOUND_PER_SESSION = 16;
/** Jobs one session's client launched whose ends are still to push: the oldest is let go past it. */
const JOBS_PER_SESSION = 1000;

interface Bound {
  /** It asked for pushes at registration (`push: true`): Claude Code declares no client capability for channels. */
  push: boolean;
  release?: () => void;
  detach?: () => void;
}

/**
 * What ties hub registrations to the 2025-11-25 MCP session they registered in (or last called
 * with their handle in). While the session's GET stream is open its client is reachable: its
 * registrations are held online (the hub renews them on its timer) and, for a client that takes
 * Claude Code channel events (it declared `experimental["claude/channel"]`, or registered with
 * `push: true`), each message to them and the end of each job it launched is written on that stream
 * as `notifications/claude/channel`. When the stream closes or the session ends, all of it stops:
 * presence lapses within CORRAL_HUB_PRESENCE_S, and messages wait in the inbox again.
 */
export class SessionHubLink {
  private bound = new Map<HubMember, Bound>();
  private jobs = new Set<string>();
  private streamOpen = false;
  private closed = false;
  private readonly onJob = (job: Job) => this.jobChanged(job);

  constructor(
    private readonly hub: ConversationHub,
    private readonly jobEvents: JobEvents,
    /** Writes on the session's GET stream; false when it could not. */
    private readonly write: (message: JSONRPCNotification) => boolean,
    /** Whether the client declared the channel capability at initialize. */
    private readonly clientTakesChannel: () => boolean,
  ) {}

  /** A call with the member's handle came through this session; `push`: it registered asking for pushes. */
  bind(member: HubMember, push = false): void {
    if (this.closed || member.ended) return;
    for (const [other] of this.bound) if (other.ended) this.unbind(other);
    const known = this.bound.get(member);
    if (known) {
      if (push && !known.push) {
        known.push = true;
        if (this.streamOpen) this.attach(member, known);
      }
      return;
    }
    if (this.bound.size >= BOUND_PER_SESSION) {
      const oldest = this.bound.keys().next().value;
      if (oldest) this.unbind(oldest);
    }
    const entry: Bound = { push };
    this.bound.set(member, entry);
    if (this.streamOpen) this.attach(member, entry);
  }

  /** A job this session's client launched: its end is pushed when the client takes channel events. */
  launched(jobId: string): void {
    if (this.closed) return;
    if (this.jobs.size >= JOBS_PER_SESSION) {
      const oldest = this.jobs.values().next().value;
      if (oldest !== undefined) this.jobs.delete(oldest);
    }
    if (!this.jobs.size) this.jobEvents.on("job", this.onJob);
    this.jobs.add(jobId);
  }

  /** The session's GET stream opened or closed. */
  stream(open: boolean): void {
    if (this.closed || open === this.streamOpen) return;
    this.streamOpen = open;
    for (const [member, entry] of this.bound) {
      if (open) this.attach(member, entry);
      else this.detach(member, entry);
    }
  }

  /** Whether its open stream holds a registration online now: the session is in use though no call comes. */
  holdsPresence(): boolean {
    if (!this.streamOpen) return false;
    for (const member of this.bound.keys()) if (!member.ended) return true;
    return false;
  }

  /** The session ended (DELETE, expired, made room): nothing of it holds or pushes any more. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const member of [...this.bound.keys()]) this.unbind(member);
    this.jobs.clear();
    this.jobEvents.off("job", this.onJob);
  }

  private pushes(entry: Bound): boolean {
    return entry.push || this.clientTakesChannel();
  }

  private attach(member: HubMember, entry: Bound): void {
    entry.release ??= this.hub.holdPresence(member);
    if (this.pushes(entry)) entry.detach ??= this.hub.attachPush(member, (message) => this.write(messageEvent(message)));
  }

  private detach(member: HubMember, entry: Bound): void {
    const held = entry.release !== undefined;
    entry.release?.();
    entry.detach?.();
    entry.release = undefined;
    entry.detach = undefined;
    if (held) this.hub.letGo(member);
  }

  private unbind(member: HubMember): void {
    const entry = this.bound.get(member);
    if (entry) this.detach(member, entry);
    this.bound.delete(member);
  }

  private jobChanged(job: Job): void {
    if (!isFinalStatus(job.status) || !this.jobs.delete(job.id)) return;
    if (!this.jobs.size) this.jobEvents.off("job", this.onJob);
    const pushes = this.clientTakesChannel() || [...this.bound.values()].some((b) => b.push);
    // Nothing keeps a job's end for later: a client without the stream open asks with corral_wait.
    if (pushes && this.streamOpen) this.write(jobEvent(job));
  }
}

/** A hub message as Claude Code shows it: `<channel source="corral" from="…" …>text</channel>`; meta keys are identifiers. */
function messageEvent(m: HubMessage): JSONRPCNotification {
  const meta: Record<string, string> = { kind: "message", session: m.session, from: m.from, to: m.to, message_id: String(m.id) };
  if (m.jobId) meta.job_id = m.jobId;
  return { jsonrpc: "2.0", method: CLAUDE_CHANNEL_METHOD, params: { content: m.text, meta } };
}

function jobEvent(job: Job): JSONRPCNotification {
  const content = `${jobLine(job)}\nIts answer: corral_wait(job_ids: ["${job.id}"]) or the agent's _done tool.`;
  return {
    jsonrpc: "2.0",
    method: CLAUDE_CHANNEL_METHOD,
    params: { content, meta: { kind: "job_end", job_id: job.id, agent: job.agent, status: job.status } },
  };
}

/** The links of the 2025-11-25 sessions by session id: how a tool call finds the session it came through. */
export class HubLinks {
  private byId = new Map<string, SessionHubLink>();

  add(sessionId: string, link: SessionHubLink): void {
    this.byId.set(sessionId, link);
  }

  remove(sessionId: string, link: SessionHubLink): void {
    if (this.byId.get(sessionId) === link) this.byId.delete(sessionId);
    link.close();
  }

  /** The link of the session a call came through; none for a 2026-07-28 request, which has no session. */
  get(sessionId: string | undefined): SessionHubLink | undefined {
    return sessionId === undefined ? undefined : this.byId.get(sessionId);
  }
}
