import { claude } from "../kinds/claude.js";
import { codex } from "../kinds/codex.js";
import { gemini } from "../kinds/gemini.js";
import { opencode } from "../kinds/opencode.js";
import type { CliAdapter } from "../types.js";

/**
 * ACP agents Corral knows by their command: the arguments that start their ACP mode when an agent
 * names none, how to install them, and (from their own kinds where Corral has one) the variables
 * and state folders they need. Any other command speaking ACP runs too, with only its agent's env.
 */
export interface AcpPreset {
  /** The executable's file name, as the agent's command names it (on PATH or by path). */
  command: string;
  label: string;
  /** The name the panel's Add dialog suggests for an agent started from it. */
  name: string;
  /** Who bills its work (the price table's provider, what budgets count): its CLI kind's. */
  provider: string;
  args: string[];
  /** The command that installs it. */
  install: string;
  /** What it needs after installing, when that is more than the install (a sign-in). */
  signIn?: string;
  /** What makes it print its version; null for an adapter that would start serving ACP instead. */
  versionArgs: string[] | null;
  stateDirs: readonly string[];
  ownEnv: CliAdapter["ownEnv"];
  /** It reads files itself: Corral's client does not offer it `fs/read_text_file` (client-main.ts `--agent-reads`). */
  agentReads?: boolean;
}

export const ACP_PRESETS: readonly AcpPreset[] = [
  {
    command: "opencode",
    provider: "opencode",
    name: "opencode_acp",
    label: "OpenCode",
    args: ["acp"],
    install: "npm install -g opencode-ai",
    versionArgs: ["--version"],
    stateDirs: opencode.cli.stateDirs,
    ownEnv: opencode.cli.ownEnv,
  },
  {
    command: "gemini",
    provider: "google",
    name: "gemini_acp",
    label: "Gemini CLI",
    args: ["--acp"],
    install: "npm install -g @google/gemini-cli",
    versionArgs: ["--version"],
    stateDirs: gemini.cli.stateDirs,
    ownEnv: gemini.cli.ownEnv,
    // Gemini CLI (0.61.0 and main to date) reads a file through the client before write_file and
    // replace, and takes no error reply as "no such file" (it wants an Error with code ENOENT, and
    // a JSON-RPC error arrives as a plain object: google-gemini/gemini-cli#17588), so with client
    // reads it cannot create a file. Reading itself, it creates them; its writes still come to Corral.
    agentReads: true,
  },
  {
    command: "claude-agent-acp",
    provider: "anthropic",
    name: "claude_acp",
    label: "Claude Code (Zed's ACP adapter)",
    args: [],
    install: "npm install -g @zed-industries/claude-agent-acp",
    versionArgs: null,
    stateDirs: claude.cli.stateDirs,
    ownEnv: claude.cli.ownEnv,
  },
  {
    command: "codex-acp",
    provider: "openai",
    name: "codex_acp",
    label: "Codex (Zed's ACP adapter)",
    args: [],
    install: "npm install -g @zed-industries/codex-acp",
    versionArgs: null,
    stateDirs: codex.cli.stateDirs,
    ownEnv: codex.cli.ownEnv,
  },
  {
    // GitHub Copilot CLI's ACP server (`--acp`, stdio by default); COPILOT_PROVIDER_* for its own keys.
    command: "copilot",
    provider: "github",
    name: "copilot_acp",
    label: "GitHub Copilot CLI",
    args: ["--acp", "--stdio"],
    install: "npm install -g @github/copilot",
    signIn: "sign in once (run copilot, then /login), or set GH_TOKEN or COPILOT_GITHUB_TOKEN in the server's environment",
    versionArgs: ["--version"],
    stateDirs: [".copilot"],
    ownEnv: () => ["COPILOT_*", "GH_TOKEN", "GITHUB_TOKEN", "GH_HOST"],
  },
];

/** The preset an agent's command names (its file name, wherever it lives), if any. */
export function presetOf(command: string | null | undefined): AcpPreset | undefined {
  if (!command) return undefined;
  const file = command.split("/").pop();
  return ACP_PRESETS.find((preset) => preset.command === file);
}
