import { plainTextParser, type CliAdapter } from "./types.js";

/** pyCorral: `gemini -m MODEL -y -p PROMPT` (-y approves its own file writes). */
export const geminiAdapter: CliAdapter = {
  kind: "gemini",
  defaultBinary: "gemini",
  installHint: "npm install -g @google/gemini-cli",
  invocation(spec, binary) {
    const model = spec.model ? ["-m", spec.model] : [];
    return { command: binary, args: [...model, "-y", "-p", spec.prompt], env: {}, cwd: spec.workdir };
  },
  createParser: () => plainTextParser(),
};
