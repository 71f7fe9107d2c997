import { plainTextParser, type CliAgentKind } from "../types.js";
import { cliFields } from "./fields.js";

/**
 * pyCorral: `kiro-cli-chat chat --no-interactive --trust-all-tools PROMPT`. Kiro CLI parses its
 * arguments with clap, where `--` ends the options: the prompt comes after it so it can never be
 * read as one, and the model is glued to its option (`--model=M`). It prints plain text.
 *
 * It does not resume (`resumes` unset, so a follow-up is refused): `--no-interactive` prints no
 * session id, and `--resume` picks the directory's latest conversation, which may be another
 * job's, so a follow-up could not be bound to the conversation it continues.
 */
export const kiro: CliAgentKind = {
  kind: "kiro",
  provider: "aws",
  builtins: [{ name: "kiro", description: "Kiro CLI chat, trusting all tools" }],
  fields: cliFields(),
  retries: true,
  cli: {
    defaultBinary: "kiro-cli-chat",
    installHint: "install Kiro CLI from kiro.dev (it provides kiro-cli-chat)",
    invocation(spec, binary) {
      const model = spec.model ? [`--model=${spec.model}`] : [];
      return {
        command: binary,
        args: ["chat", "--no-interactive", "--trust-all-tools", ...model, "--", spec.prompt],
        env: {},
        cwd: spec.workdir,
      };
    },
    createParser: () => plainTextParser(),
    answerIsOutput: true,
    stateDirs: [".kiro", ".local/share/kiro-cli"],
    // It signs in with `kiro-cli login` (its state dirs), not with keys.
    ownEnv: () => ["KIRO_*"],
    versionArgs: ["--version"],
  },
};
