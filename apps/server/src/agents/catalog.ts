import type { AgentKind } from "@corral/shared";
import { defaultWorkdir, type AppConfig } from "../config.js";
import type { AgentRow } from "../db/schema.js";
import type { NewAgentRow } from "../db/repos/agents.js";
import { claudeAdapter } from "./claude.js";
import { codexAdapter } from "./codex.js";
import { commandAdapter } from "./command.js";
import { geminiAdapter } from "./gemini.js";
import { kiroAdapter } from "./kiro.js";
import { opencodeAdapter } from "./opencode.js";
import { DEFAULT_RETRY_POLICY } from "../jobs/retry.js";
import type { CliAdapter } from "./types.js";

export const cliAdapters: Record<CliAdapter["kind"], CliAdapter> = {
  gemini: geminiAdapter,
  opencode: opencodeAdapter,
  claude: claudeAdapter,
  codex: codexAdapter,
  kiro: kiroAdapter,
  command: commandAdapter,
};

export function cliAdapterFor(kind: AgentKind): CliAdapter | undefined {
  return kind === "ollama" ? undefined : cliAdapters[kind];
}

/** The provider billed for an agent's work, by kind. */
export const defaultProviders: Record<AgentKind, string> = {
  gemini: "google",
  opencode: "opencode",
  claude: "anthropic",
  codex: "openai",
  kiro: "aws",
  command: "local",
  ollama: "ollama",
};

interface BuiltinAgent {
  name: string;
  kind: AgentKind;
  description: string;
}

const builtins: BuiltinAgent[] = [
  { name: "gemini", kind: "gemini", description: "Google Gemini CLI" },
  { name: "opencode", kind: "opencode", description: "OpenCode CLI; its answer is also written to output.md" },
  { name: "claude", kind: "claude", description: "Claude Code in print mode, allowed to edit files in its workdir" },
  { name: "codex", kind: "codex", description: "OpenAI Codex CLI (codex exec)" },
  { name: "kiro", kind: "kiro", description: "Kiro CLI chat, trusting all tools" },
];

/**
 * A new agent's row: Corral's defaults (30 min timeout, 4 at once, retries of transient failures
 * for CLI agents) for every field `fields` leaves unset. The workdir is always given: its default
 * depends on the settings (`defaultWorkdir`).
 */
export function newAgentRow(fields: Pick<NewAgentRow, "name" | "kind" | "workdir"> & Partial<NewAgentRow>, now = Date.now()): NewAgentRow {
  const set = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
  const retries = fields.kind !== "command" && fields.kind !== "ollama";
  return {
    provider: defaultProviders[fields.kind],
    model: null,
    timeoutS: 1800,
    maxConcurrent: 4,
    env: {},
    enabled: true,
    command: null,
    args: null,
    baseUrl: null,
    description: "",
    retry: retries ? DEFAULT_RETRY_POLICY : null,
    sandbox: "none",
    builtin: false,
    createdAt: now,
    updatedAt: now,
    ...set,
    name: fields.name,
    kind: fields.kind,
    workdir: fields.workdir,
  };
}

/** Built-in agents as first stored; their model stays null so `CORRAL_<AGENT>_MODEL` applies. */
export function builtinAgentRows(config: Pick<AppConfig, "defaultWorkdir">, now = Date.now()): NewAgentRow[] {
  return builtins.map((b) => newAgentRow({ ...b, workdir: defaultWorkdir(config, b.name), builtin: true }, now));
}

/** The model a job runs with when it names none. */
export function effectiveModel(agent: AgentRow, config: AppConfig): string | null {
  return agent.model ?? config.defaultModels[agent.name] ?? null;
}
