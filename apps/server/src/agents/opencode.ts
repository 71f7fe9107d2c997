import { opencodeParser } from "./parsers/opencode.js";
import type { CliAdapter } from "./types.js";

/**
 * pyCorral's `opencode --log-level ERROR -m MODEL run PROMPT`, with `--format json` for the
 * answer, tokens and cost; the answer alone (not the events) lands in output.md. The prompt is
 * `run`'s `message` positional given in its option form, glued (`--message=PROMPT`), so a prompt
 * such as `--version` reaches the model. Not `-- PROMPT`: OpenCode 1.18 turns a number-like
 * prompt after `--` (`42`, `1e3`) into a number and crashes on it.
 */
export const opencodeAdapter: CliAdapter = {
  kind: "opencode",
  defaultBinary: "opencode",
  installHint: "npm install -g opencode-ai",
  invocation(spec, binary) {
    const model = spec.model ? [`--model=${spec.model}`] : [];
    return {
      command: binary,
      args: ["--log-level", "ERROR", ...model, "run", "--format", "json", `--message=${spec.prompt}`],
      env: {},
      cwd: spec.workdir,
    };
  },
  createParser: opencodeParser,
  finalTextFile: "output.md",
};
