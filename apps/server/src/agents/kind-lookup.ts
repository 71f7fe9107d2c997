// The agent kinds this server knows, looked up by kind: each kind is one module, listed once in
// agents/kinds/index.ts. (Agents themselves, and everything else stored, are in the registry, db/.)
import type { AppConfig } from "../config.js";
import { agentKindModules } from "./kinds/index.js";
import type { AgentKindModule, CliAdapter, ConversationStore, InProcessAdapter } from "./types.js";

/** The module of an agent kind, or undefined for a kind this server does not know. */
export function agentKindModule(kind: string): AgentKindModule | undefined {
  return agentKindModules.find((m) => m.kind === kind);
}

/** The CLI adapter of a kind whose workers Corral spawns; undefined for in-process and unknown kinds. */
export function cliAdapterFor(kind: string): CliAdapter | undefined {
  const module = agentKindModule(kind);
  return module && "cli" in module ? module.cli : undefined;
}

/** Kinds this server knows, for error messages. */
export const agentKindNames = (): string[] => agentKindModules.map((m) => m.kind);

/** The in-process adapters of kinds that run inside the server, by kind. */
export function inProcessAdapters(config: AppConfig, conversations: ConversationStore): Record<string, InProcessAdapter> {
  return Object.fromEntries(agentKindModules.flatMap((m) => ("inProcess" in m ? [[m.kind, m.inProcess.adapter(config, conversations)]] : [])));
}
