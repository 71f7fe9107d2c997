import { plainTextParser, type CliAdapter } from "./types.js";

/** pyCorral: `opencode --log-level ERROR -m MODEL run PROMPT`; the answer also lands in output.md. */
export const opencodeAdapter: CliAdapter = {
  kind: "opencode",
  defaultBinary: "opencode",
  installHint: "npm install -g opencode-ai",
  invocation(spec, binary) {
    const model = spec.model ? ["-m", spec.model] : [];
    return {
      command: binary,
      args: ["--log-level", "ERROR", ...model, "run", spec.prompt],
      env: {},
      cwd: spec.workdir,
    };
  },
  createParser: () => plainTextParser(),
  finalTextFile: "output.md",
};
