import type { HubMessage } from "@corral/shared";
import { OpencodeClient, type SessionRef } from "../agents/opencode-server/client.js";
import { runTurn } from "../agents/opencode-server/turn.js";
import type { WorkerIO } from "../agents/types.js";
import type { NewHubMessage, Registry } from "../db/registry.js";
import type { HubMessageRow } from "../db/schema.js";
import { inUnit, type Unit } from "../db/unit.js";
import { ServiceError } from "../lib/errors.js";
import type { HubMember } from "./hub-member.js";
import { addressOf, type LiveTarget } from "./live-target.js";

/** Live turns followed at once over the whole server; each holds an event stream open. */
const MAX_TURNS = 100;
/** A turn not over after this long is no longer followed (its session goes on in OpenCode). */
const TURN_TIMEOUT_MS = 30 * 60_000;

export interface LiveRelayDeps {
  registry: Registry;
  /** Stores a message in the unit's transaction; it is announced once that has committed. */
  store(unit: Unit, row: NewHubMessage): Promise<HubMessage>;
}

/** What the target's model reads before the message: who sent it, and that its answer goes back. */
const framed = (sent: Pick<HubMessageRow, "from" | "session" | "text">) =>
  `[Corral: a message from ${sent.from} in session ${sent.session}; your reply is sent back to ${sent.from}]\n\n${sent.text}`;

/**
 * Messages to clients that registered their own server (live targets): each is posted into the
 * target's OpenCode session as an `opencode_server` job's prompt is (runTurn), joining the turn it
 * is running, and the answer of that turn comes back to the sender as a message. The message is
 * stored first, marked as owed an answer; a restart cannot follow a turn it lost, so it answers the
 * owed messages with an error saying to send again. Nothing here stops a turn in OpenCode: the
 * session is its owner's.
 */
export class LiveRelay {
  /** Messages whose turn is being followed, by message id. */
  private readonly following = new Map<number, { sent: HubMessageRow; stop: AbortController }>();

  constructor(private readonly deps: LiveRelayDeps) {}

  /** At start: answers owed by live targets whose turns this process never followed. */
  async recover(): Promise<void> {
    for (const sent of await this.deps.registry.conversations.pendingAnswers()) {
      if (sent.jobId === null && !this.following.has(sent.id)) {
        await this.answer(sent, `error: Corral restarted before ${sent.to} answered; send the message again`);
      }
    }
  }

  /** Stops following (the answers stay owed in the registry, and the next start settles them). */
  close(): void {
    for (const { stop } of this.following.values()) stop.abort();
  }

  /** Stores the message, then posts it into the target's session and follows the turn that answers it. */
  async ask(from: HubMember, to: string, target: LiveTarget, text: string, unit: Unit): Promise<HubMessage> {
    if (this.following.size >= MAX_TURNS) {
      throw new ServiceError(`${MAX_TURNS} live turns are being followed already; try again later`, 503, undefined, undefined, "unavailable");
    }
    for (const { sent } of this.following.values()) {
      if (sent.session === from.session && sent.from === from.name && sent.to === to) {
        throw new ServiceError(
          `${to} is still answering your previous message (#${sent.id}); receive its answer first (corral_receive), then send again`,
          409,
          "to",
          undefined,
          "conflict",
        );
      }
    }
    const at = Date.now();
    const message = await this.deps.store(unit, { session: from.session, from: from.name, to, text, at, receivedAt: at, answerPending: true });
    const sent: HubMessageRow = { ...message, receivedAt: at, answerPending: true };
    const stop = new AbortController();
    this.following.set(sent.id, { sent, stop });
    unit.afterRollback(() => this.following.delete(sent.id));
    unit.afterCommit(() => void this.follow(sent, target, stop.signal));
    return message;
  }

  private async follow(sent: HubMessageRow, target: LiveTarget, stop: AbortSignal): Promise<void> {
    const signal = AbortSignal.any([stop, AbortSignal.timeout(TURN_TIMEOUT_MS)]);
    let text: string;
    try {
      const client = new OpencodeClient(addressOf(target));
      const session = await sessionOf(client, target, signal);
      // The turn's parts are the target's own conversation: shown in its window, not kept here.
      const io: WorkerIO = { write: () => undefined, usage: () => undefined, signal };
      const result = await runTurn({ client, session, prompt: framed(sent), model: undefined, io, leaveRunning: true });
      text = result.finalText || `(${sent.to} finished its turn without an answer)`;
    } catch (err) {
      // Closing: the answer stays owed, and the next start settles it.
      if (stop.aborted) return;
      const why = signal.aborted ? `no answer within ${TURN_TIMEOUT_MS / 60_000} minutes` : err instanceof Error ? err.message : String(err);
      text = `error: ${why}`;
    } finally {
      this.following.delete(sent.id);
    }
    await this.answer(sent, text);
  }

  /** Stores the answer and settles the message, in one transaction; a failure leaves it owed for the next start. */
  private async answer(sent: HubMessageRow, text: string): Promise<void> {
    try {
      await inUnit(this.deps.registry, async (unit) => {
        await this.deps.store(unit, { session: sent.session, from: sent.to, to: sent.from, text, jobId: null, at: Date.now() });
        await unit.tx.conversations.settleAnswer(sent.id);
      });
    } catch {
      // Left owed: the registry keeps answer_pending, so the next start answers it.
    }
  }
}

/** The target's session, or its latest when it names none; one it does not have is an error of the answer. */
async function sessionOf(client: OpencodeClient, target: LiveTarget, signal: AbortSignal): Promise<SessionRef> {
  if (target.session) return client.session(target.session, signal);
  const latest = await client.latestSession(signal);
  if (!latest) throw new Error(`OpenCode at ${target.url} has no session to post into; open one in its window, or register with server.session`);
  return latest;
}
