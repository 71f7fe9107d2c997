import type { HubAgent, HubMessage } from "@corral/shared";
import type { StreamSink, Turn } from "./stream-sink.js";

/** Messages read per catch-up turn. */
const PAGE_MESSAGES = 100;

export interface ConversationSource {
  /** Stored messages of the session after a cursor, oldest first. */
  read(cursor: number, limit: number): Promise<HubMessage[]>;
  agents(): Promise<HubAgent[]>;
}

/**
 * One conversation session followed by one connection: its messages from a cursor, then live,
 * and its agents whenever they change. Like a job stream it catches up from the registry a page
 * per turn the connection grants, and goes back to catching up when the socket backs up, so a
 * slow client costs a page, not the session's history. Messages are stored before they are
 * announced, so a catch-up read and the live events after it meet without a gap.
 */
export class ConversationStream {
  private live = false;
  private running = false;
  private stopped = false;
  private readingAgents = false;
  private agentsAgain = false;
  /** A message was announced while a catch-up read was under way: it may be past what the read saw. */
  private heard = false;

  constructor(
    readonly session: string,
    private cursor: number,
    private readonly source: ConversationSource,
    private readonly sink: StreamSink,
  ) {
    this.agentsChanged();
    this.catchUp();
  }

  stop(): void {
    this.stopped = true;
  }

  onMessage(message: HubMessage): void {
    if (this.stopped || message.id <= this.cursor) return;
    if (!this.live) {
      this.heard = true;
      return;
    }
    if (this.sink.congested()) return this.catchUp();
    this.cursor = message.id;
    this.sink.send({ type: "conversation_message", message });
  }

  /** Sends the session's agents as they are now; changes during a read are sent after it. */
  agentsChanged(): void {
    if (this.stopped) return;
    if (this.readingAgents) {
      this.agentsAgain = true;
      return;
    }
    this.readingAgents = true;
    this.source.agents().then(
      (agents) => {
        if (!this.stopped) this.sink.send({ type: "conversation_agents", session: this.session, agents });
        this.agentsRead();
      },
      (err: unknown) => {
        this.sink.failed(err, `the agents of conversation ${this.session}`);
        this.agentsRead();
      },
    );
  }

  private agentsRead(): void {
    this.readingAgents = false;
    if (this.agentsAgain) {
      this.agentsAgain = false;
      this.agentsChanged();
    }
  }

  private catchUp(): void {
    this.live = false;
    if (this.running) return;
    this.running = true;
    this.sink.whenRoom(this.turn);
  }

  private readonly turn: Turn = (open) => {
    if (!open || this.stopped) {
      this.running = false;
      return;
    }
    this.heard = false;
    return this.source.read(this.cursor, PAGE_MESSAGES).then(
      (page) => {
        if (this.stopped) {
          this.running = false;
          return;
        }
        for (const message of page) {
          this.cursor = message.id;
          this.sink.send({ type: "conversation_message", message });
        }
        if (page.length === PAGE_MESSAGES || this.heard) return this.sink.whenRoom(this.turn);
        // The read found the end and nothing was announced while it ran: every later message is announced after this turn.
        this.running = false;
        this.live = true;
      },
      (err: unknown) => {
        this.running = false;
        this.stopped = true;
        this.sink.failed(err, `conversation ${this.session}`);
      },
    );
  };
}
