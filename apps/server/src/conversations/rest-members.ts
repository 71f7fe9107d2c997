import { randomBytes } from "node:crypto";
import type { ConversationHub } from "./hub.js";
import type { HubMember } from "./hub-member.js";

/** REST registrations held at once; each costs a place in its session and, when waiting, a receive. */
export const MAX_REST_MEMBERS = 256;

/**
 * Agents that registered through REST, by the key each was given. REST has no session to end
 * with the client, so a key ends by DELETE, or once unused for as long as an idle MCP session
 * lives (CORRAL_MCP_SESSION_IDLE_S); a receive in progress counts as use.
 */
export class RestMembers {
  private byKey = new Map<string, HubMember>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly hub: ConversationHub,
    private readonly idleMs: number,
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, idleMs)).unref();
  }

  get size(): number {
    return this.byKey.size;
  }

  add(member: HubMember): string {
    const key = randomBytes(24).toString("base64url");
    this.byKey.set(key, member);
    return key;
  }

  /** The live member with this key, or undefined (never given, ended, or expired). */
  get(key: string): HubMember | undefined {
    const member = this.byKey.get(key);
    if (member?.ended) this.byKey.delete(key);
    return member?.ended ? undefined : member;
  }

  /** Resolves once the registration's end is stored. */
  remove(key: string): Promise<void> {
    const member = this.byKey.get(key);
    this.byKey.delete(key);
    return member ? this.hub.leave(member) : Promise.resolve();
  }

  close(): void {
    clearInterval(this.sweeper);
    for (const key of [...this.byKey.keys()]) void this.remove(key);
  }

  private sweep(): void {
    const cutoff = Date.now() - this.idleMs;
    for (const [key, member] of this.byKey) if (member.ended || (!member.wake && member.lastSeenAt < cutoff)) void this.remove(key);
  }
}
