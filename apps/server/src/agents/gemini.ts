import { geminiParser } from "./parsers/gemini.js";
import type { CliAdapter } from "./types.js";

/**
 * pyCorral's `gemini -m MODEL -y -p PROMPT` (-y approves its own file writes), with
 * `-o stream-json` so the answer and token counts can be told apart from the rest. Values are
 * glued to their options (`--model=M`, `--prompt=PROMPT`): `-p --version` would print the
 * version and exit, and Gemini CLI 0.61 does not take a prompt given after `--`.
 */
export const geminiAdapter: CliAdapter = {
  kind: "gemini",
  defaultBinary: "gemini",
  installHint: "npm install -g @google/gemini-cli",
  invocation(spec, binary) {
    const model = spec.model ? [`--model=${spec.model}`] : [];
    return { command: binary, args: [...model, "-y", "-o", "stream-json", `--prompt=${spec.prompt}`], env: {}, cwd: spec.workdir };
  },
  createParser: geminiParser,
};
