/**
 * A live registration as this server process knows it: its name in one conversation session,
 * found by its handle's hash. The registry holds the registration (and its lease); this holds what
 * only lives in memory, made again from the registry on the first call after a restart.
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
}
