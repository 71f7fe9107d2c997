import { EventEmitter } from "node:events";
import type { Agent, AgentAvailability, AgentWithAvailability, CreateAgentBody, UpdateAgentBody } from "@corral/shared";
import { defaultWorkdir, type AppConfig } from "../config.js";
import type { AgentsRepo, NewAgentRow } from "../db/repos/agents.js";
import type { AgentRow } from "../db/schema.js";
import { notFound, ServiceError } from "../lib/errors.js";
import { assertAgentEnv } from "./agent-env.js";
import { cliAvailabilityWithVersion } from "./availability.js";
import { builtinAgentRows, effectiveModel, newAgentRow } from "./catalog.js";

export type AvailabilityCheck = (agent: AgentRow) => Promise<AgentAvailability>;

export interface AgentServiceDeps {
  config: AppConfig;
  agents: AgentsRepo;
  /** Agents with jobs cannot be deleted (their history would lose its agent). */
  hasJobs: (agent: string) => boolean;
  /** Built-in rows from other catalogs (Ollama agents). */
  extraBuiltins?: () => NewAgentRow[];
  /** Availability of kinds that are not CLIs, e.g. whether the Ollama server answers. */
  availabilityChecks?: Partial<Record<string, AvailabilityCheck>>;
}

export interface AgentServiceEvents {
  /** The set of agents or one's settings changed (tools follow, queues re-check limits). */
  changed: [{ name: string; removed: boolean }];
}

export class AgentService extends EventEmitter<AgentServiceEvents> {
  constructor(private readonly deps: AgentServiceDeps) {
    super();
    this.setMaxListeners(0);
  }

  /** Stores built-in agents that are not there yet; what users changed stays. */
  seed(): void {
    const rows = [...builtinAgentRows(this.deps.config), ...(this.deps.extraBuiltins?.() ?? [])];
    this.deps.agents.insertMissing(rows);
  }

  toAgent(row: AgentRow): Agent {
    return { ...row, args: row.args ?? null, effectiveModel: effectiveModel(row, this.deps.config) };
  }

  list(): Agent[] {
    return this.deps.agents.list().map((row) => this.toAgent(row));
  }

  /** Enabled agents, for tool lists. */
  enabledRows(): AgentRow[] {
    return this.deps.agents.list().filter((a) => a.enabled);
  }

  isEnabled(name: string): boolean {
    return this.deps.agents.get(name)?.enabled === true;
  }

  row(name: string): AgentRow {
    const row = this.deps.agents.get(name);
    if (!row) throw notFound(`agent ${name} does not exist`, "name");
    return row;
  }

  get(name: string): Agent {
    return this.toAgent(this.row(name));
  }

  async availability(row: AgentRow): Promise<AgentAvailability> {
    const check = this.deps.availabilityChecks?.[row.kind];
    return check ? check(row) : cliAvailabilityWithVersion(row, this.deps.config);
  }

  /** All agents are checked at once, so a slow `--version` or Ollama host delays the list only by itself. */
  async withAvailability(agents: Agent[]): Promise<AgentWithAvailability[]> {
    return Promise.all(agents.map(async (a) => ({ ...a, availability: await this.availability(this.row(a.name)) })));
  }

  create(body: CreateAgentBody): Agent {
    if (this.deps.agents.get(body.name)) throw new ServiceError(`agent ${body.name} already exists`, 409, "name");
    assertAgentEnv(body.env, this.deps.config.allowLoaderEnv);
    const row = this.deps.agents.insert(newAgentRow({ ...body, workdir: body.workdir ?? defaultWorkdir(this.deps.config, body.name) }));
    this.emit("changed", { name: row.name, removed: false });
    return this.toAgent(row);
  }

  update(name: string, patch: UpdateAgentBody): Agent {
    const current = this.row(name);
    if (current.kind === "command" && patch.command === null) {
      throw new ServiceError("a command agent needs the executable to run", 400, "command");
    }
    assertAgentEnv(patch.env, this.deps.config.allowLoaderEnv);
    const row = this.deps.agents.update(name, { ...patch, updatedAt: Date.now() });
    if (!row) throw notFound(`agent ${name} does not exist`, "name");
    this.emit("changed", { name, removed: false });
    return this.toAgent(row);
  }

  remove(name: string): void {
    const row = this.row(name);
    if (row.builtin) throw new ServiceError(`${name} is built in; disable it instead (enabled: false)`, 409, "name");
    if (this.deps.hasJobs(name)) throw new ServiceError(`${name} has jobs in its history; disable it instead (enabled: false)`, 409, "name");
    this.deps.agents.delete(name);
    this.emit("changed", { name, removed: true });
  }
}
