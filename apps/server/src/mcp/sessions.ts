import type { AgentRow } from "../db/schema.js";
import type { Services } from "../services.js";
import type { NodeStreamableHttpTransport } from "./http-transport.js";
import type { HubLinks, SessionHubLink } from "./hub-link.js";
import type { SessionServer } from "./server-factory.js";
import type { McpMount } from "./toolsets.js";

export interface McpSession {
  mount: McpMount;
  transport: NodeStreamableHttpTransport;
  tools: SessionServer;
  /** The registry generation its tools match. */
  toolsGeneration: number;
  lastSeen: number;
  /**
   * Calls (POSTs) still being answered, such as a long `_run`. A session is idle at zero even
   * with a GET stream open: SDK clients keep one open for as long as they live.
   */
  calls: number;
  /** Its hub registrations: held online while its GET stream is open, pushed to when its client takes channel events. */
  hubLink: SessionHubLink;
  close(): Promise<void>;
}

/** Sessions whose tools are brought up to date per event-loop turn after an agent change. */
const REFRESH_BATCH = 100;

/**
 * The MCP sessions held in memory, at most `CORRAL_MCP_MAX_SESSIONS`. A new session takes the
 * place of the least recently used idle one (one whose stream holds a hub registration online
 * last); when every session is busy with a call it is refused.
 * Closing one loses nothing a client registered: a conversation name lives on its handle, not on
 * a session. Idle sessions expire (`CORRAL_MCP_SESSION_IDLE_S`). An agent change reads the registry once and updates the sessions' tools a batch at a
 * time, so the change itself costs the same with 2 sessions or 2,000.
 */
export class McpSessions {
  /** Initialized sessions by id, least recently used first. */
  private byId = new Map<string, McpSession>();
  /** Every session, initialized or still being opened: what the cap counts. */
  private all = new Set<McpSession>();
  private generation = 0;
  private enabled: { generation: number; rows: AgentRow[] } | null = null;
  private refreshing = false;
  private refreshAgain = false;
  private readonly onAgentsChanged = () => {
    this.generation++;
    this.refreshAll();
  };

  constructor(
    private readonly services: Services,
    private readonly hubLinks: HubLinks,
  ) {
    services.agents.on("changed", this.onAgentsChanged);
  }

  get max(): number {
    return this.services.config.mcpMaxSessions;
  }

  get(id: string): McpSession | undefined {
    return this.byId.get(id);
  }

  /** The enabled agents, read once per change of the registry, with the generation they are as new as. */
  async enabledAgents(): Promise<{ generation: number; rows: AgentRow[] }> {
    const generation = this.generation;
    if (this.enabled?.generation === generation) return this.enabled;
    const read = { generation, rows: await this.services.agents.enabledRows() };
    if ((this.enabled?.generation ?? -1) < generation) this.enabled = read;
    return read;
  }

  /** Frees a place for a new session, closing the least recently used idle one if need be. */
  makeRoom(): void {
    if (this.all.size < this.max) return;
    // One whose stream holds a hub registration online goes last: closing it lets its name lapse.
    for (const spareHolders of [true, false]) {
      for (const session of this.byId.values()) {
        if (session.calls > 0 || (spareHolders && session.hubLink.holdsPresence())) continue;
        this.close(session);
        return;
      }
    }
    throw new SessionsFullError(
      `too many MCP sessions: all ${this.max} are busy with calls (CORRAL_MCP_MAX_SESSIONS); wait for a call to end, ` +
        "close a session you no longer use (DELETE /mcp with its mcp-session-id header), or raise CORRAL_MCP_MAX_SESSIONS",
    );
  }

  /** A session being opened counts against the cap from now on; `generation`: that of the agents its tools were made from. */
  opened(session: McpSession, generation: number): void {
    session.toolsGeneration = generation;
    this.all.add(session);
  }

  initialized(id: string, session: McpSession): void {
    this.byId.set(id, session);
    this.hubLinks.add(id, session.hubLink);
  }

  /** A request arrived for the session: it becomes the most recently used, with current tools. */
  touch(session: McpSession): Promise<void> {
    session.lastSeen = Date.now();
    const id = session.transport.sessionId;
    if (id && this.byId.delete(id)) this.byId.set(id, session);
    return this.syncTools(session);
  }

  /** Forgets a session that closed (DELETE, transport closed, never initialized). */
  forget(session: McpSession): void {
    this.all.delete(session);
    const id = session.transport.sessionId;
    if (id && this.byId.get(id) === session) this.byId.delete(id);
    // Its registrations are no longer held by it: they lapse within CORRAL_HUB_PRESENCE_S unless their client calls.
    if (id) this.hubLinks.remove(id, session.hubLink);
    else session.hubLink.close();
  }

  close(session: McpSession): void {
    this.forget(session);
    session.close().catch(() => undefined);
  }

  /**
   * Closes sessions without a call for `idleMs`. One whose open GET stream holds a hub
   * registration online is in use (a Claude Code window waiting for messages pushed to it): it stays
   * until its stream closes, or it must make room for a new session.
   */
  sweep(idleMs: number): void {
    const cutoff = Date.now() - idleMs;
    for (const session of [...this.byId.values()]) {
      if (session.calls === 0 && session.lastSeen < cutoff && !session.hubLink.holdsPresence()) this.close(session);
    }
  }

  async closeAll(): Promise<void> {
    this.services.agents.off("changed", this.onAgentsChanged);
    const sessions = [...this.all];
    this.all.clear();
    this.byId.clear();
    for (const session of sessions) session.hubLink.close();
    await Promise.all(sessions.map((s) => s.close().catch(() => undefined)));
  }

  private async syncTools(session: McpSession): Promise<void> {
    if (session.toolsGeneration === this.generation) return;
    const { generation, rows } = await this.enabledAgents();
    // Another sync may have brought newer tools while these were read.
    if (session.toolsGeneration >= generation) return;
    session.toolsGeneration = generation;
    session.tools.syncTools(rows);
  }

  /** Brings every session's tools up to date (and so notifies their clients), a batch per turn. */
  private refreshAll(): void {
    if (this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    this.refreshing = true;
    const queue = [...this.all];
    const step = async () => {
      for (const session of queue.splice(0, REFRESH_BATCH)) {
        if (!this.all.has(session)) continue;
        try {
          await this.syncTools(session);
        } catch {
          // A session that cannot take its new tools is closed; its client starts a new one.
          this.close(session);
        }
      }
      if (queue.length) return void setImmediate(() => void step());
      this.refreshing = false;
      if (this.refreshAgain) {
        this.refreshAgain = false;
        this.refreshAll();
      }
    };
    setImmediate(() => void step());
  }
}

export class SessionsFullError extends Error {}
