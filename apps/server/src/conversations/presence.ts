import type { HubMember } from "./hub-member.js";

/**
 * Registrations kept online while something of their client stays open — the event stream of the
 * MCP session they registered in, a receive waiting — without a write per stream per second: the
 * hub renews every held registration in one write per tick (a fraction of CORRAL_HUB_PRESENCE_S),
 * so a stream that closes stops renewing, and its registration goes offline within that presence.
 */
export class PresenceHolds {
  /** Held members and how many holds each has (a session's stream and a receive may overlap). */
  private held = new Map<HubMember, number>();

  /** Holds the member online until the release it answers is called (idempotent). */
  hold(member: HubMember): () => void {
    this.held.set(member, (this.held.get(member) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(member) ?? 1) - 1;
      if (left > 0) this.held.set(member, left);
      else this.held.delete(member);
    };
  }

  /** The members to renew now; ended ones are let go (their handle renews nothing). */
  members(): HubMember[] {
    const live: HubMember[] = [];
    for (const member of this.held.keys()) {
      if (member.ended) this.held.delete(member);
      else live.push(member);
    }
    return live;
  }

  isHeld(member: HubMember): boolean {
    return this.held.has(member);
  }
}
