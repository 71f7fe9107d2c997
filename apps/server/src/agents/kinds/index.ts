import type { AgentKindModule } from "../types.js";
import { acpKind } from "./acp.js";
import { agy } from "./agy.js";
import { api } from "./api.js";
import { claude } from "./claude.js";
import { codex } from "./codex.js";
import { command } from "./command.js";
import { gemini } from "./gemini.js";
import { kiro } from "./kiro.js";
import { ollama } from "./ollama.js";
import { opencode } from "./opencode.js";
import { opencodeServer } from "./opencode-server.js";

/** Every agent kind this server runs, in the order their built-in agents are listed. */
export const agentKindModules: readonly AgentKindModule[] = [
  gemini,
  agy,
  opencode,
  claude,
  codex,
  kiro,
  command,
  ollama,
  opencodeServer,
  api,
  acpKind,
];
