import { claudeParser } from "./parsers/claude.js";
import type { CliAdapter } from "./types.js";

/**
 * `claude -p PROMPT` may only write in its workdir: `acceptEdits` lets it create and edit files
 * there without asking, and works as root, where `--dangerously-skip-permissions` is refused.
 * `stream-json` (which needs `--verbose` with -p) gives the answer, tokens and cost as it runs.
 * `-p` takes no value: the prompt is the positional argument, after `--` so a prompt such as
 * `--version` is sent to the model instead of being read as an option; the model is glued to
 * its option (`--model=M`) for the same reason.
 */
export const claudeAdapter: CliAdapter = {
  kind: "claude",
  defaultBinary: "claude",
  installHint: "npm install -g @anthropic-ai/claude-code",
  invocation(spec, binary) {
    const model = spec.model ? [`--model=${spec.model}`] : [];
    return {
      command: binary,
      args: ["-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits", ...model, "--", spec.prompt],
      env: {},
      cwd: spec.workdir,
    };
  },
  createParser: claudeParser,
};
