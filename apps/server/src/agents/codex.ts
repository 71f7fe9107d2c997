import { codexParser } from "./parsers/codex.js";
import type { CliAdapter } from "./types.js";

/**
 * `codex exec` runs without questions; `workspace-write` lets it write in its workdir only, and
 * `--json` gives the answer and token counts as events. The prompt comes after `--`, so neither
 * an option (`--version`) nor one of exec's subcommands (`review`, `resume`, `help`) can be
 * smuggled in as a prompt; the model is glued to its option (`--model=M`). A prompt of exactly
 * `-` still means "read stdin" to codex, which gets nothing there and fails the job.
 */
export const codexAdapter: CliAdapter = {
  kind: "codex",
  defaultBinary: "codex",
  installHint: "npm install -g @openai/codex",
  invocation(spec, binary) {
    const model = spec.model ? [`--model=${spec.model}`] : [];
    return {
      command: binary,
      args: ["exec", "--json", "--skip-git-repo-check", "--sandbox", "workspace-write", "-C", spec.workdir, ...model, "--", spec.prompt],
      env: {},
      cwd: spec.workdir,
    };
  },
  createParser: codexParser,
};
