import { plainTextParser, type CliAgentKind } from "../types.js";
import { agentFields, argumentTemplate, executable } from "./fields.js";

/**
 * Any executable is a worker ("the minimal contract"): the agent's argument template has
 * `{prompt}`, `{workdir}` and `{model}` replaced inside each argument; without a template the
 * prompt is the only argument. It is never run to ask its version: it could do real work.
 * It does not resume (`resumes` unset): an arbitrary executable has no session to continue.
 */
export const command: CliAgentKind = {
  kind: "command",
  provider: "local",
  builtins: [],
  fields: agentFields({ connection: [executable("command")], wide: [argumentTemplate] }),
  adding: {
    title: "Add a command agent",
    intro: "Any executable becomes a worker: it runs in the job's workdir with the prompt in its arguments.",
    primary: true,
    presets: [],
  },
  retries: false,
  cli: {
    defaultBinary: "",
    installHint: "set the agent's command to an executable on PATH or an absolute path",
    invocation(spec, binary) {
      const template = spec.agent.args ?? ["{prompt}"];
      const values: Record<string, string> = { prompt: spec.prompt, workdir: spec.workdir, model: spec.model ?? "" };
      const args = template.map((arg) => arg.replace(/\{(prompt|workdir|model)\}/g, (_, key: string) => values[key] ?? ""));
      return { command: binary, args, env: {}, cwd: spec.workdir };
    },
    createParser: () => plainTextParser(),
    answerIsOutput: true,
    stateDirs: [],
    // Nothing beyond the basics: what else it needs, its agent's env gives (or CORRAL_PASS_ENV).
    ownEnv: () => [],
    versionArgs: null,
  },
};
