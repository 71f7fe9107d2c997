import { opencodeParser } from "./parsers/opencode.js";
import type { CliAdapter } from "./types.js";

/**
 * pyCorral's `opencode --log-level ERROR -m MODEL run PROMPT`, with `--format json` for the
 * answer, tokens and cost; the answer alone (not the events) lands in output.md.
 */
export const opencodeAdapter: CliAdapter = {
  kind: "opencode",
  defaultBinary: "opencode",
  installHint: "npm install -g opencode-ai",
  invocation(spec, binary) {
    const model = spec.model ? ["-m", spec.model] : [];
    return {
      command: binary,
      args: ["--log-level", "ERROR", ...model, "run", "--format", "json", spec.prompt],
      env: {},
      cwd: spec.workdir,
    };
  },
  createParser: opencodeParser,
  finalTextFile: "output.md",
};
