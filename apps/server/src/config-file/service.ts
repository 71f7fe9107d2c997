import { EventEmitter } from "node:events";
import { existsSync, type FSWatcher, watch } from "node:fs";
import path from "node:path";
import { type AgentFieldName, type ConfigFileError, type ConfigFileStatus, ModelSchema } from "@corral/shared";
import type { FastifyBaseLogger } from "fastify";
import { defaultWorkdir, type AppConfig } from "../config.js";
import { refusedLoaderVariable, loaderRefusal } from "../agents/agent-env.js";
import { newAgentRow } from "../agents/catalog.js";
import { fieldWithNul, missingRequiredField, pinnedAcrossSessions, unappliedField } from "../agents/kind-descriptors.js";
import { agentKindModule, agentKindNames } from "../agents/kind-lookup.js";
import type { AgentService } from "../agents/service.js";
import type { CostService } from "../costs/service.js";
import type { NewAgentRow } from "../db/registry.js";
import type { ConfigDeclarations } from "./parse.js";
import { ConfigFileRefusal, configError, describeConfigError, readConfigText, refusal } from "./read.js";
import { mapProvider, ProviderError, type ProviderMapping } from "./providers.js";

/** Editors write a file in several steps (truncate and write, or write a copy and rename it over): read once they are done. */
const SETTLE_MS = 150;

/** `status`: the file was read again (changed or not); what the panel's banner shows, live. */
export interface ConfigFileEvents {
  status: [ConfigFileStatus];
}

export interface ConfigFileDeps {
  config: AppConfig;
  agents: AgentService;
  costs: CostService;
}

/**
 * A file in the folder Corral was started from that a user may have meant as its config file (the
 * orchestrator's `config.yaml`, or a `corral.yaml`), when Corral's own is not there: where it looks, and how.
 */
export function meantFile(config: Pick<AppConfig, "configFile" | "configFileNamed">, dir: string): string | null {
  if (config.configFileNamed) return null;
  for (const name of ["config.yaml", "corral.yaml"]) {
    const candidate = path.resolve(dir, name);
    if (candidate !== config.configFile && existsSync(candidate)) {
      return `Corral reads its config file from ${config.configFile} (none there), not ${candidate}: start it with CORRAL_CONFIG=${candidate}, or copy the file there`;
    }
  }
  return null;
}

/**
 * The config file (`CORRAL_CONFIG`): read at start and whenever it changes. A file that cannot be
 * used is refused as a whole, with every error in it (line, column and field), and what the last
 * good one declared stays in force.
 */
export class ConfigFileService extends EventEmitter<ConfigFileEvents> {
  private current: ConfigFileStatus;
  private watcher: FSWatcher | null = null;
  private timer: NodeJS.Timeout | null = null;
  private log: FastifyBaseLogger | null = null;
  /** Loads one at a time, in the order the changes came. */
  private loading: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: ConfigFileDeps) {
    super();
    this.current = { path: deps.config.configFile, state: "absent", agents: [], loadedAt: null, errors: [], hint: null };
  }

  status(): ConfigFileStatus {
    return this.current;
  }

  /** Loads the file and follows its changes. The directory is watched, not the file, so a file renamed over it (or created later) is seen. */
  async start(log: FastifyBaseLogger): Promise<void> {
    this.log = log;
    // What an earlier run loaded stays in force until this run's first good load.
    const loaded = (await this.deps.agents.list()).filter((a) => a.source === "file");
    this.current = { ...this.current, agents: loaded.map((a) => a.name) };
    await this.load();
    const file = this.deps.config.configFile;
    try {
      this.watcher = watch(path.dirname(file), { persistent: false }, (_event, name) => {
        if (name === null || name === path.basename(file)) this.schedule();
      });
      this.watcher.on("error", (err) => log.warn({ err, file }, "stopped watching the config file"));
    } catch (err) {
      log.warn({ err, file }, "cannot watch the config file's folder; changes are read at the next start");
    }
  }

  close(): void {
    this.watcher?.close();
    if (this.timer) clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.load();
    }, SETTLE_MS);
  }

  /** A listener that throws (a WebSocket gone wrong) is logged; it never fails a load or reaches the watch. */
  private announce(): void {
    try {
      this.emit("status", this.current);
    } catch (err) {
      this.log?.error({ err }, "announcing the config file's status failed");
    }
  }

  /** Reads the file and applies it; never rejects (a bad file is a status, not a crash). */
  load(): Promise<ConfigFileStatus> {
    const next = this.loading.then(() => this.loadNow());
    this.loading = next;
    return next;
  }

  private async loadNow(): Promise<ConfigFileStatus> {
    const file = this.deps.config.configFile;
    try {
      const text = readConfigText(file);
      if (text === null && this.deps.config.configFileNamed) {
        throw refusal(`${file} does not exist (CORRAL_CONFIG names it)`);
      }
      // The YAML library loads with the first file, not with every start.
      const declared = text === null ? null : (await import("./parse.js")).parseConfigText(text);
      const problems: ConfigFileError[] = [...(declared?.errors ?? [])];
      const rows = declared ? await this.agentRows(declared, problems) : [];
      if (declared) await this.checkCosts(declared, rows, problems);
      if (problems.length > 0) throw new ConfigFileRefusal(problems);
      await this.deps.agents.syncFileAgents(rows);
      if (declared) await this.applyCosts(declared);
      this.deps.costs.setFileBudgets(declared?.budgets ?? []);
      this.current = {
        path: file,
        state: declared ? "loaded" : "absent",
        agents: rows.map((r) => r.name),
        loadedAt: declared ? Date.now() : null,
        errors: [],
        hint: declared ? null : meantFile(this.deps.config, this.deps.config.startDir),
      };
      if (this.current.hint) this.log?.warn({ file }, this.current.hint);
      if (declared) this.log?.info({ file, agents: this.current.agents }, "config file loaded");
    } catch (err) {
      const errors = err instanceof ConfigFileRefusal ? err.errors : [configError(`cannot apply ${file}: ${(err as Error).message}`)];
      this.current = { ...this.current, state: "error", errors, hint: null };
      this.log?.error(
        { file, errors },
        `config file refused, the previous agents are kept: ${errors.length} error${errors.length === 1 ? "" : "s"}\n${errors.map(describeConfigError).join("\n")}`,
      );
    }
    this.announce();
    return this.current;
  }

  /**
   * The file's agents as registry rows, every value checked as the registry checks it; what is
   * wrong goes to `problems`, every agent's, so one report says all of it.
   */
  private async agentRows(declared: ConfigDeclarations, problems: ConfigFileError[]): Promise<NewAgentRow[]> {
    const { config, agents } = this.deps;
    const kinds = agentKindNames();
    const kindProvider = (kind: string) => agentKindModule(kind)?.provider ?? "local";
    const registry = new Map((await agents.list()).map((a) => [a.name, a]));
    const rows: NewAgentRow[] = [];
    for (const [name, agent] of Object.entries(declared.agents)) {
      const at = (...field: (string | number)[]) => ["agents", name, ...field];
      const before = problems.length;
      const problem = (field: (string | number)[], message: string) => problems.push(declared.errorAt(at(...field), message));
      const existing = registry.get(name);
      if (existing && existing.source !== "file") {
        problem([], `${name} is already an agent in the registry${existing.builtin ? " (built in)" : ""}; give the file's agent another name`);
      }
      let mapped: ProviderMapping | null = null;
      try {
        mapped = mapProvider(agent.provider, kinds, kindProvider, { model: agent.model ?? null, baseUrl: agent.baseUrl ?? null });
      } catch (err) {
        if (!(err instanceof ProviderError)) throw err;
        problem([err.field ?? "provider"], err.message);
      }
      const runnerLabel = agents.runnerLabelRefusal(agent.runnerLabel);
      if (runnerLabel) problem(["runnerLabel"], runnerLabel);
      const loader = refusedLoaderVariable(agent.env ?? {}, config.allowLoaderEnv);
      if (loader) problem(["env", loader], loaderRefusal(loader));
      if (!mapped) continue;
      if (mapped.model !== null && !mapped.modelFromField && agent.model != null) {
        problem(["model"], `the model is already in provider (${agent.provider}); give it once`);
      }
      const model = mapped.model ?? agent.model ?? null;
      // The model taken out of provider (or out of a litellm model's prefix) is held to what every door takes.
      const modelIssue = mapped.model === null ? undefined : ModelSchema.safeParse(mapped.model).error?.issues[0];
      if (modelIssue) problem([mapped.modelFromField ? "model" : "provider"], modelIssue.message);
      if (mapped.api && model === null) problem(["provider"], `an API agent needs a model: write ${agent.provider}/<model>, or give model`);
      // The fields the kind declares required, as AgentService checks them on create (a command agent's command, an API agent's api).
      const declaredFields: Partial<Record<AgentFieldName, unknown>> = { ...agent, api: mapped.api };
      const missing = missingRequiredField(mapped.kind, (field) => declaredFields[field]);
      if (missing) problem([missing.field], missing.message);
      const unapplied = unappliedField(mapped.kind, (field) => declaredFields[field]);
      if (unapplied) problem([unapplied.field], unapplied.message);
      const nul = fieldWithNul((field) => declaredFields[field]);
      if (nul) problem([nul.field], nul.message);
      const apart = pinnedAcrossSessions(mapped.kind, agent.sessions ?? [], agent.env ?? {});
      if (apart) problem(["sessions"], apart);
      if (problems.length > before) continue;
      const { provider: _provider, ...fields } = agent;
      rows.push(
        newAgentRow({
          ...fields,
          name,
          kind: mapped.kind,
          provider: mapped.provider,
          model,
          api: mapped.api,
          baseUrl: agent.baseUrl ?? mapped.baseUrl,
          apiKeyEnv: agent.apiKeyEnv ?? mapped.apiKeyEnv,
          workdir: agent.workdir ?? defaultWorkdir(config, name),
          source: "file",
        }),
      );
    }
    return rows;
  }

  private async checkCosts(declared: ConfigDeclarations, agents: readonly NewAgentRow[], problems: ConfigFileError[]): Promise<void> {
    const seen = new Set<string>();
    const known = declared.budgets.length ? await this.deps.costs.providers(agents.map((a) => a.provider)) : [];
    for (const [i, b] of declared.budgets.entries()) {
      const unknown = this.deps.costs.unknownProvider(b.provider, known);
      if (unknown) problems.push(declared.errorAt(["budgets", i, "provider"], unknown));
      const key = `${b.provider}/${b.period}`;
      if (seen.has(key)) problems.push(declared.errorAt(["budgets", i, "period"], `${b.provider} has a ${b.period} budget already in this file`));
      seen.add(key);
    }
    seen.clear();
    for (const [i, p] of declared.prices.entries()) {
      const key = `${p.provider}/${p.model}`;
      if (seen.has(key)) problems.push(declared.errorAt(["prices", i, "model"], `${key} has a price already in this file`));
      seen.add(key);
    }
  }

  /** Budgets and prices the file declares are set to its values; ones it stops declaring stay (delete them in the panel). */
  private async applyCosts(declared: ConfigDeclarations): Promise<void> {
    const { costs } = this.deps;
    const budgets = await costs.budgets();
    for (const b of declared.budgets) {
      const limits = { maxCostUsd: b.maxCostUsd ?? null, maxTokens: b.maxTokens ?? null };
      const existing = budgets.find((x) => x.provider === b.provider && x.period === b.period);
      if (!existing) await costs.createBudget(b);
      else if (existing.maxCostUsd !== limits.maxCostUsd || existing.maxTokens !== limits.maxTokens) await costs.updateBudget(existing.id, limits);
    }
    const prices = (await costs.prices()).prices.filter((p) => p.origin === "override");
    for (const p of declared.prices) {
      const existing = prices.find((x) => x.provider === p.provider && x.model === p.model);
      const same =
        existing?.inputPerM === p.inputPerM && existing.outputPerM === p.outputPerM && existing.cachedInputPerM === (p.cachedInputPerM ?? null);
      if (!same) await costs.setPrice(p);
    }
  }

  /** The agents a user added (registry and file), budgets and price overrides, as a config file. */
  async export(): Promise<string> {
    const { exportConfig } = await import("./export.js");
    return exportConfig({
      agents: (await this.deps.agents.list()).filter((a) => !a.builtin),
      budgets: await this.deps.costs.budgets(),
      prices: (await this.deps.costs.prices()).prices.filter((p) => p.origin === "override"),
      defaults: (name, kind) => newAgentRow({ name, kind, workdir: defaultWorkdir(this.deps.config, name) }),
    });
  }
}
