import { defaultWorkdir, type AppConfig } from "../config.js";
import type { NewAgentRow } from "../db/registry.js";
import { DEFAULT_RETRY_POLICY } from "./retry-defaults.js";
import { agentKindModule } from "./kind-lookup.js";
import { agentKindModules } from "./kinds/index.js";

/**
 * A new agent's row: Corral's defaults (30 min timeout, its kind's jobs at once or 4, retries of transient failures
 * for CLI agents) for every field `fields` leaves unset. The workdir is always given: its default
 * depends on the settings (`defaultWorkdir`).
 */
export function newAgentRow(fields: Pick<NewAgentRow, "name" | "kind" | "workdir"> & Partial<NewAgentRow>, now = Date.now()): NewAgentRow {
  const set = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
  const module = agentKindModule(fields.kind);
  return {
    provider: module?.providerFor?.(fields) ?? module?.provider ?? "local",
    model: null,
    timeoutS: 1800,
    maxConcurrent: module?.maxConcurrent ?? 4,
    env: {},
    enabled: true,
    command: null,
    args: null,
    baseUrl: null,
    description: "",
    retry: module?.retries ? DEFAULT_RETRY_POLICY : null,
    sandbox: "none",
    worktree: false,
    api: null,
    apiKeyEnv: null,
    role: null,
    tools: null,
    allowedHosts: null,
    maxSteps: null,
    permissions: null,
    runnerLabel: null,
    sessions: [],
    source: "registry",
    builtin: false,
    createdAt: now,
    updatedAt: now,
    ...set,
    name: fields.name,
    kind: fields.kind,
    workdir: fields.workdir,
  };
}

/** Every kind's built-in agents as first stored; their model stays null so `CORRAL_<AGENT>_MODEL` applies. */
export function builtinAgentRows(config: Pick<AppConfig, "defaultWorkdir">, now = Date.now()): NewAgentRow[] {
  return agentKindModules.flatMap((m) =>
    m.builtins.map((b) => newAgentRow({ ...b, kind: m.kind, workdir: defaultWorkdir(config, b.name), builtin: true }, now)),
  );
}
