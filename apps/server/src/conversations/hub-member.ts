import type { HubMessage } from "@corral/shared";

/**
 * A live registration as this server process knows it: its name in one conversation session,
 * found by its handle's hash. The registry holds the registration (its handle's lease and its
 * presence); this holds what only lives in memory, made again from the registry on the first call
 * after a restart.
 */
export interface HubMember {
  readonly hash: string;
  readonly session: string;
  readonly name: string;
  ended: boolean;
  /** Ends the receive it waits in, with what its inbox holds then (nothing when it left). */
  wake: (() => void) | null;
  /** Messages stored for it while it was known here: a receive that found none sees whether one came meanwhile. */
  delivered: number;
  /** Until when this process last made it online: a sign of its client after that brings it back online. */
  presentUntil: number;
  /**
   * Writes one message to its client's open stream (a Claude Code channel); false when it could not
   * (no stream, or one the client does not read): the message then stays in the inbox.
   */
  push: ((message: HubMessage) => boolean) | null;
  /** The inbox's readers (receives, pushes) one after another: a message is never handed out twice here. */
  inboxTurn: Promise<unknown>;
  /** A push pass is running; `pushAgain`: a message came meanwhile, so it runs once more. */
  pushing: boolean;
  pushAgain: boolean;
}
