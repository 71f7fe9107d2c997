import { EventEmitter } from "node:events";
import {
  describeIssues,
  type Agent,
  type AgentFieldName,
  type AgentKindDescriptor,
  type AgentAvailability,
  type AgentWithAvailability,
  type CreateAgentBody,
  type UpdateAgentBody,
} from "@corral/shared";
import { defaultWorkdir, type AppConfig } from "../config.js";
import type { NewAgentRow } from "../db/registry.js";
import type { Registry, Repos } from "../db/registry.js";
import type { AgentRow } from "../db/schema.js";
import { notFound, ServiceError } from "../lib/errors.js";
import { assertAgentEnv } from "./agent-env.js";
import { cliAvailabilityWithVersion } from "./availability.js";
import { builtinAgentRows, newAgentRow } from "./catalog.js";
import { agentKindDescriptors, fieldWithNul, missingRequiredField, pinnedAcrossSessions, unappliedField } from "./kind-descriptors.js";
import { effectiveModel } from "./model.js";
import { agentKindModule, agentKindNames } from "./kind-lookup.js";

export interface AgentServiceDeps {
  config: AppConfig;
  /** Agents, and their jobs: agents with jobs cannot be deleted (their history would lose its agent). */
  registry: Pick<Registry, "agents" | "jobs" | "transaction" | "dialect">;
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

  private get agents() {
    return this.deps.registry.agents;
  }

  /** Stores built-in agents that are not there yet; what users changed stays. */
  seed(): Promise<void> {
    return this.agents.insertMissing(builtinAgentRows(this.deps.config));
  }

  toAgent(row: AgentRow): Agent {
    const kind = agentKindModule(row.kind);
    const readable = kind?.readEvent !== undefined;
    return {
      ...row,
      args: row.args ?? null,
      readable,
      answerIsOutput: kind !== undefined && "cli" in kind && kind.cli.answerIsOutput === true,
      resumes: kind?.resumes === true,
      effectiveModel: effectiveModel(row, this.deps.config),
    };
  }

  /** Every kind this server runs, each with the fields its agents' create and edit forms ask for. */
  /** The kinds' forms as this server can apply them: on a SQLite registry (one machine, no runners) without a runner label. */
  kinds(): AgentKindDescriptor[] {
    const kinds = agentKindDescriptors();
    if (this.deps.registry.dialect === "postgres") return kinds;
    return kinds.map((k) => ({ ...k, fields: k.fields.filter((f) => f.name !== "runnerLabel") }));
  }

  async list(): Promise<Agent[]> {
    return (await this.agents.list()).map((row) => this.toAgent(row));
  }

  /** Enabled agents, for tool lists. */
  async enabledRows(): Promise<AgentRow[]> {
    return (await this.agents.list()).filter((a) => a.enabled);
  }

  async row(name: string, tx: Pick<Repos, "agents"> = this.deps.registry): Promise<AgentRow> {
    const row = await tx.agents.get(name);
    if (!row) throw notFound(`agent ${name} does not exist`, "name");
    return row;
  }

  async get(name: string): Promise<Agent> {
    return this.toAgent(await this.row(name));
  }

  async availability(row: AgentRow): Promise<AgentAvailability> {
    const module = agentKindModule(row.kind);
    if (module && "inProcess" in module) return module.inProcess.availability(row, this.deps.config);
    return cliAvailabilityWithVersion(row, this.deps.config);
  }

  /** All agents are checked at once, so a slow `--version` or Ollama host delays the list only by itself. */
  async withAvailability(agents: Agent[]): Promise<AgentWithAvailability[]> {
    return Promise.all(agents.map(async (a) => ({ ...a, availability: await this.availability(await this.row(a.name)) })));
  }

  async create(body: CreateAgentBody): Promise<Agent> {
    // The name checked and taken in one transaction.
    const row = await this.deps.registry.transaction(async (tx) => {
      if (await tx.agents.get(body.name)) throw new ServiceError(`agent ${body.name} already exists`, 409, "name");
      if (!agentKindModule(body.kind)) throw invalidField("kind", `unknown agent kind ${body.kind}; this server runs ${agentKindNames().join(", ")}`);
      assertRequiredFields(body.kind, (field) => body[field]);
      assertApplied(body.kind, (field) => body[field]);
      assertNoNul((field) => body[field]);
      assertSessionsApart(body.kind, body.sessions ?? [], body.env ?? {}, "sessions");
      this.assertRunnerLabel(body.runnerLabel);
      assertAgentEnv(body.env, this.deps.config.allowLoaderEnv);
      return tx.agents.insert(newAgentRow({ ...body, workdir: body.workdir ?? defaultWorkdir(this.deps.config, body.name) }));
    });
    this.emit("changed", { name: row.name, removed: false });
    return this.toAgent(row);
  }

  async update(name: string, patch: UpdateAgentBody): Promise<Agent> {
    const row = await this.deps.registry.transaction(async (tx) => {
      const current = await this.row(name, tx);
      this.assertInRegistry(current);
      // A field the edit leaves out keeps its current value, which a required field must have too.
      const changed: Partial<Record<AgentFieldName, unknown>> = patch;
      assertRequiredFields(current.kind, (field) => (changed[field] === undefined ? current[field] : changed[field]));
      // What the edit sets (an agent stored before this check keeps what it has until edited there).
      assertApplied(current.kind, (field) => changed[field]);
      assertNoNul((field) => changed[field]);
      // When the edit sets them, named as it did: the sessions, or the env that pins the agent to one conversation.
      if (patch.sessions || patch.env) {
        assertSessionsApart(current.kind, patch.sessions ?? current.sessions, patch.env ?? current.env, patch.sessions ? "sessions" : "env");
      }
      this.assertRunnerLabel(patch.runnerLabel);
      assertAgentEnv(patch.env, this.deps.config.allowLoaderEnv);
      const updated = await tx.agents.update(name, { ...patch, updatedAt: Date.now() });
      if (!updated) throw notFound(`agent ${name} does not exist`, "name");
      // A new label or a higher limit may let runners take jobs that waited: they look at once.
      if (updated.runnerLabel !== null) await tx.runners.announceQueued([updated.runnerLabel]);
      return updated;
    });
    this.emit("changed", { name, removed: false });
    return this.toAgent(row);
  }

  /** Checked and deleted in one transaction: a job launched meanwhile keeps its agent. */
  async remove(name: string): Promise<void> {
    await this.deps.registry.transaction(async (tx) => {
      const row = await this.row(name, tx);
      this.assertInRegistry(row);
      const keep = (why: string) =>
        new ServiceError(`${name} ${why}; disable it instead (enabled: false)`, 409, "name", undefined, "agent_not_deletable", { agent: name });
      if (row.builtin) throw keep("is built in");
      if (await tx.jobs.hasJobs(name)) throw keep("has jobs in its history");
      await tx.agents.delete(name);
    });
    this.emit("changed", { name, removed: true });
  }

  /** Runners reach the registry over the network, so an agent waiting for one needs it in PostgreSQL. */
  runnerLabelRefusal(label: string | null | undefined): string | null {
    if (!label || this.deps.registry.dialect === "postgres") return null;
    return "runners need the registry in PostgreSQL (this server keeps it in SQLite): set CORRAL_DATABASE_URL and restart, or leave runnerLabel empty so the server runs this agent's jobs";
  }

  private assertRunnerLabel(label: string | null | undefined): void {
    const refusal = this.runnerLabelRefusal(label);
    if (refusal) throw invalidField("runnerLabel", refusal);
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
  async syncFileAgents(rows: NewAgentRow[]): Promise<void> {
    const declared = new Set(rows.map((r) => r.name));
    const now = Date.now();
    // All of it or none, told once stored.
    const changes = await this.deps.registry.transaction(async (tx) => {
      const changed: { name: string; removed: boolean }[] = [];
      for (const row of rows) {
        const current = await tx.agents.get(row.name);
        if (current?.source === "registry") throw new Error(`${row.name} is a registry agent`);
        if (!current) await tx.agents.insert({ ...row, createdAt: now, updatedAt: now });
        else if (differs(current, row)) await tx.agents.update(row.name, { ...settings(row), updatedAt: now });
        else continue;
        changed.push({ name: row.name, removed: false });
      }
      for (const row of await tx.agents.list()) {
        if (row.source !== "file" || declared.has(row.name)) continue;
        if (!(await tx.jobs.hasJobs(row.name))) {
          await tx.agents.delete(row.name);
          changed.push({ name: row.name, removed: true });
        } else if (row.enabled) {
          await tx.agents.update(row.name, { enabled: false, updatedAt: now });
          changed.push({ name: row.name, removed: false });
        }
      }
      return changed;
    });
    for (const change of changes) this.emit("changed", change);
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

/** Shaped as a body that failed its schema, since this service completes the schema's checks. */
function invalidField(field: string, message: string): ServiceError {
  const issues = [{ field, message }];
  return new ServiceError(`invalid input: ${describeIssues(issues)}`, 400, field, issues);
}

/** No field is set that the agent's kind would store and never apply (a CLI agent's `tools`, say). */
function assertApplied(kind: string, settingOf: (field: AgentFieldName) => unknown): void {
  const unapplied = unappliedField(kind, settingOf);
  if (unapplied) throw invalidField(unapplied.field, unapplied.message);
}

/** No setting holds a NUL byte: it would fail every job at spawn, and PostgreSQL refuses to store it (a 500). */
function assertNoNul(settingOf: (field: AgentFieldName) => unknown): void {
  const found = fieldWithNul(settingOf);
  if (found) throw invalidField(found.field, found.message);
}

/** An agent pinned to one conversation of its worker takes part in one hub session at most. */
function assertSessionsApart(kind: string, sessions: readonly string[], env: Record<string, string>, field: "sessions" | "env"): void {
  const refusal = pinnedAcrossSessions(kind, sessions, env);
  if (refusal) throw invalidField(field, refusal);
}

/** The fields the agent's kind declares required (a command agent's executable, an API agent's API) are there. */
function assertRequiredFields(kind: string, settingOf: (field: AgentFieldName) => unknown): void {
  const missing = missingRequiredField(kind, settingOf);
  if (missing) throw invalidField(missing.field, missing.message);
}
