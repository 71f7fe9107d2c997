import type { JobOrigin } from "@corral/shared";

/** A live registration: an MCP session's or a REST client's name in one conversation session. */
export interface HubMember {
  readonly session: string;
  readonly name: string;
  readonly door: Exclude<JobOrigin, "panel">;
  readonly label: string | null;
  readonly registeredAt: number;
  lastSeenAt: number;
  ended: boolean;
  /** Ends the receive it waits in, with what its inbox holds then (nothing when it left). */
  wake: (() => void) | null;
  /** Messages stored for it while it was registered: a receive that found none sees whether one came meanwhile. */
  delivered: number;
}
