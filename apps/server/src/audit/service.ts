import { EventEmitter } from "node:events";
import type { AuditAction, AuditEntry, AuditList, AuditListQuery, JobOrigin } from "@corral/shared";
import type { AuditRepo, Repos } from "../db/registry.js";

/** Who asks for something: the door it came through and, when known, the client program. */
export interface Actor {
  door: JobOrigin;
  client: string | null;
}

const MAX_CLIENT = 200;

/** A header or clientInfo value, bounded and printable, or null when there is nothing useful. */
function clientLabel(value: unknown): string | null {
  if (typeof value !== "string") return null;
  // eslint-disable-next-line no-control-regex
  const clean = value.replace(/[\u0000-\u001f\u007f]/g, "").trim();
  return clean ? clean.slice(0, MAX_CLIENT) : null;
}

/** A REST caller: the panel says so with `x-corral-client: panel`; others are named by that header or their user-agent. */
export function restActor(headers: Record<string, string | string[] | undefined>): Actor {
  const declared = clientLabel(headers["x-corral-client"]);
  return { door: declared === "panel" ? "panel" : "rest", client: declared ?? clientLabel(headers["user-agent"]) };
}

/** An MCP session's client, from the clientInfo it sent in `initialize`. */
export function mcpActor(clientInfo: { name?: string; version?: string } | undefined): Actor {
  const name = clientLabel(clientInfo?.name);
  const version = clientLabel(clientInfo?.version);
  return { door: "mcp", client: name ? (version ? `${name}/${version}` : name) : null };
}

export interface AuditServiceEvents {
  /** An entry was stored. */
  recorded: [AuditEntry];
}

/** The audit trail: every launch and cancel, stored before it is announced. */
export class AuditService extends EventEmitter<AuditServiceEvents> {
  constructor(private readonly repo: AuditRepo) {
    super();
    this.setMaxListeners(0);
  }

  /** Writes an entry in `tx`, the transaction of the change it records; `announce` it once that committed. */
  store(tx: Pick<Repos, "audit">, action: AuditAction, job: { id: string; agent: string }, actor: Actor): Promise<AuditEntry> {
    return tx.audit.insert({ at: Date.now(), action, jobId: job.id, agent: job.agent, door: actor.door, client: actor.client });
  }

  announce(entry: AuditEntry): void {
    this.emit("recorded", entry);
  }

  async list(query: AuditListQuery): Promise<AuditList> {
    const { rows, total } = await this.repo.list(query);
    return { entries: rows, total };
  }
}
