import { EventEmitter } from "node:events";
import {
  describeIssues,
  type Agent,
  type AgentAvailability,
  type AgentWithAvailability,
  type CreateAgentBody,
  type UpdateAgentBody,
} from "@corral/shared";
import { defaultWorkdir, type AppConfig } from "../config.js";
import type { AgentsRepo, NewAgentRow } from "../db/repos/agents.js";
import type { AgentRow } from "../db/schema.js";
import { notFound, ServiceError } from "../lib/errors.js";
import { assertAgentEnv } from "./agent-env.js";
import { cliAvailabilityWithVersion } from "./availability.js";
import { builtinAgentRows, newAgentRow } from "./catalog.js";
import { effectiveModel } from "./model.js";
import { agentKindModule, agentKindNames, cliAdapterFor } from "./registry.js";

export interface AgentServiceDeps {
  config: AppConfig;
  agents: AgentsRepo;
  /** Agents with jobs cannot be deleted (their history would lose its agent). */
  hasJobs: (agent: string) => boolean;
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
    this.deps.agents.insertMissing(builtinAgentRows(this.deps.config));
  }

  toAgent(row: AgentRow): Agent {
    const kind = agentKindModule(row.kind);
    const readable = kind?.readEvent !== undefined;
    return { ...row, args: row.args ?? null, readable, resumes: kind?.resumes === true, effectiveModel: effectiveModel(row, this.deps.config) };
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
    const module = agentKindModule(row.kind);
    if (module && "inProcess" in module) return module.inProcess.availability(row, this.deps.config);
    return cliAvailabilityWithVersion(row, this.deps.config);
  }

  /** All agents are checked at once, so a slow `--version` or Ollama host delays the list only by itself. */
  async withAvailability(agents: Agent[]): Promise<AgentWithAvailability[]> {
    return Promise.all(agents.map(async (a) => ({ ...a, availability: await this.availability(this.row(a.name)) })));
  }

  create(body: CreateAgentBody): Agent {
    if (this.deps.agents.get(body.name)) throw new ServiceError(`agent ${body.name} already exists`, 409, "name");
    if (!agentKindModule(body.kind)) throw invalidField("kind", `unknown agent kind ${body.kind}; this server runs ${agentKindNames().join(", ")}`);
    if (cliAdapterFor(body.kind)?.commandRequired && !body.command) throw commandRequired(body.kind);
    assertKindFields(body.kind, { api: body.api ?? null });
    assertAgentEnv(body.env, this.deps.config.allowLoaderEnv);
    const row = this.deps.agents.insert(newAgentRow({ ...body, workdir: body.workdir ?? defaultWorkdir(this.deps.config, body.name) }));
    this.emit("changed", { name: row.name, removed: false });
    return this.toAgent(row);
  }

  update(name: string, patch: UpdateAgentBody): Agent {
    const current = this.row(name);
    this.assertInRegistry(current);
    if (cliAdapterFor(current.kind)?.commandRequired && patch.command === null) throw commandRequired(current.kind);
    assertKindFields(current.kind, { api: patch.api === undefined ? current.api : patch.api });
    assertAgentEnv(patch.env, this.deps.config.allowLoaderEnv);
    const row = this.deps.agents.update(name, { ...patch, updatedAt: Date.now() });
    if (!row) throw notFound(`agent ${name} does not exist`, "name");
    this.emit("changed", { name, removed: false });
    return this.toAgent(row);
  }

  remove(name: string): void {
    const row = this.row(name);
    this.assertInRegistry(row);
    const keep = (why: string) =>
      new ServiceError(`${name} ${why}; disable it instead (enabled: false)`, 409, "name", undefined, "agent_not_deletable", { agent: name });
    if (row.builtin) throw keep("is built in");
    if (this.deps.hasJobs(name)) throw keep("has jobs in its history");
    this.deps.agents.delete(name);
    this.emit("changed", { name, removed: true });
  }

  /** Agents of the config file are changed there: an edit here would be undone at its next load. */
  private assertInRegistry(row: AgentRow): void {
    if (row.source !== "file") return;
    throw new ServiceError(
      `${row.name} is declared in the config file ${this.deps.config.configFile}; edit it there (Corral reloads the file when it changes)`,
      409,
      "name",
      undefined,
      "agent_in_config_file",
      { agent: row.name },
    );
  }

  /**
   * Makes the config file's agents what `rows` declare: new ones are added, changed ones set
   * (a field the file no longer gives returns to its default), and one no longer declared is
   * deleted, or disabled when its jobs are in the history (declaring it again brings it back).
   * The caller has checked that no row takes a registry agent's name.
   */
  syncFileAgents(rows: NewAgentRow[]): void {
    const declared = new Set(rows.map((r) => r.name));
    const now = Date.now();
    for (const row of rows) {
      const current = this.deps.agents.get(row.name);
      if (current?.source === "registry") throw new Error(`${row.name} is a registry agent`);
      if (!current) this.deps.agents.insert({ ...row, createdAt: now, updatedAt: now });
      else if (differs(current, row)) this.deps.agents.update(row.name, { ...settings(row), updatedAt: now });
      else continue;
      this.emit("changed", { name: row.name, removed: false });
    }
    for (const row of this.deps.agents.list()) {
      if (row.source !== "file" || declared.has(row.name)) continue;
      if (!this.deps.hasJobs(row.name)) {
        this.deps.agents.delete(row.name);
        this.emit("changed", { name: row.name, removed: true });
      } else if (row.enabled) {
        this.deps.agents.update(row.name, { enabled: false, updatedAt: now });
        this.emit("changed", { name: row.name, removed: false });
      }
    }
  }
}

/** A row's settings: what a file declares, without its identity and times. */
function settings(row: NewAgentRow): Partial<NewAgentRow> {
  const { name: _name, createdAt: _created, updatedAt: _updated, builtin: _builtin, ...rest } = row;
  return rest;
}

function differs(current: AgentRow, next: NewAgentRow): boolean {
  const was = current as Partial<NewAgentRow>;
  return Object.entries(settings(next)).some(
    ([key, value]) => JSON.stringify(was[key as keyof NewAgentRow] ?? null) !== JSON.stringify(value ?? null),
  );
}

/** Shaped as a body that failed its schema, since the registry completes the schema's checks. */
function invalidField(field: string, message: string): ServiceError {
  const issues = [{ field, message }];
  return new ServiceError(`invalid input: ${describeIssues(issues)}`, 400, field, issues);
}

function assertKindFields(kind: string, fields: Pick<AgentRow, "api">): void {
  const problem = agentKindModule(kind)?.invalid?.(fields);
  if (problem) throw invalidField(problem.field, problem.message);
}

const commandRequired = (kind: string) => invalidField("command", `a ${kind} agent needs the executable to run`);
