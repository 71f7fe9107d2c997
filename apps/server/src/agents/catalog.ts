import type { AgentKind } from "@corral/shared";
import type { AppConfig } from "../config.js";
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

/** Built-in agents as first stored; their model stays null so `CORRAL_<AGENT>_MODEL` applies. */
export function builtinAgentRows(config: AppConfig, now = Date.now()): NewAgentRow[] {
  return builtins.map((b) => ({
    name: b.name,
    kind: b.kind,
    provider: defaultProviders[b.kind],
    model: null,
    workdir: `~/misRepos/corral/${b.name}`,
    timeoutS: 1800,
    maxConcurrent: 4,
    env: {},
    enabled: true,
    command: null,
    args: null,
    baseUrl: null,
    description: b.description,
    retry: DEFAULT_RETRY_POLICY,
    builtin: true,
    createdAt: now,
    updatedAt: now,
  }));
}

/** The model a job runs with when it names none. */
export function effectiveModel(agent: AgentRow, config: AppConfig): string | null {
  return agent.model ?? config.defaultModels[agent.name] ?? null;
}
