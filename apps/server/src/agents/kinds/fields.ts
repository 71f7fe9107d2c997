import {
  type AgentField,
  type AgentFieldChoice,
  type AgentFieldInput,
  type AgentTool,
  AgentToolSchema,
  DEFAULT_AGENT_TOOLS,
  type ModelApi,
  ModelApiSchema,
} from "@corral/shared";

/**
 * The settings kinds declare for their agents, one builder each, so a kind module lists which it
 * takes and how it names them. `agentFields` puts them in the forms' order around the settings
 * every agent has.
 */

type FieldSpec = Pick<AgentField, "name" | "label" | "input" | "whenEmpty"> & Partial<AgentField>;

export function field(spec: FieldSpec): AgentField {
  const wide = !["text", "number", "select", "toggle"].includes(spec.input.type);
  return { hint: null, required: null, secret: false, default: null, createOnly: false, shownWhen: null, wide, ...spec };
}

const text: AgentFieldInput = { type: "text" };
const number: AgentFieldInput = { type: "number" };

/** A CLI kind's executable, looked up on PATH when left empty. */
export const binaryOverride = field({ name: "command", label: "Binary override", hint: "empty: found on PATH", input: text, whenEmpty: "default" });

/** The executable of a kind that has no binary of its own (any command): it cannot be left empty. */
export const executable = (kind: string) =>
  field({
    name: "command",
    label: "Executable",
    hint: "name on PATH or absolute path",
    input: text,
    whenEmpty: "default",
    required: `a ${kind} agent needs the executable to run`,
  });

export const argumentTemplate = field({
  name: "args",
  label: "Arguments, one per line",
  hint: "{prompt}, {workdir} and {model} are replaced",
  input: { type: "list", rows: 3, split: "lines", mono: true },
  whenEmpty: "blank",
  default: ["{prompt}"],
});

/** The address of the server a kind talks to instead of running a binary. */
export const serverUrl = (label: string, hint: string) => field({ name: "baseUrl", label, hint, input: text, whenEmpty: "default" });

const MODEL_API_LABELS: Record<ModelApi, string> = {
  openai: "OpenAI or OpenAI-compatible",
  anthropic: "Anthropic",
  google: "Google",
};

export const modelApi = (kind: string) =>
  field({
    name: "api",
    label: "API",
    input: { type: "select", options: ModelApiSchema.options.map((value) => ({ value, label: MODEL_API_LABELS[value] })) },
    whenEmpty: "default",
    default: "openai",
    required: `an ${kind} agent needs its API: openai (or any OpenAI-compatible server), anthropic or google`,
  });

export const apiKeyVariable = field({
  name: "apiKeyEnv",
  label: "Key variable",
  hint: "the environment variable holding the key; empty: no key sent",
  input: text,
  whenEmpty: "default",
  secret: true,
});

export const stepLimit = (defaultSteps: number) =>
  field({ name: "maxSteps", label: "Step limit", hint: `model turns per job; empty: ${defaultSteps}`, input: number, whenEmpty: "default" });

/** An ACP agent's answer to its permission requests (agents/acp/permissions.ts). */
export const permissions = field({
  name: "permissions",
  label: "Permission requests",
  input: {
    type: "select",
    options: [
      { value: "workdir", label: "allow files inside the workdir, deny the rest" },
      { value: "deny", label: "deny all" },
      { value: "allow", label: "allow all (with the sandbox)" },
    ],
  },
  whenEmpty: "default",
  default: "workdir",
});

export const role = field({
  name: "role",
  label: "Role",
  hint: "the system prompt; empty: a worker that completes the task with its tools",
  input: { type: "multiline", rows: 3 },
  whenEmpty: "default",
});

/** What each tool lets the model do, as its checkbox says it. */
const TOOL_LABELS: Record<AgentTool, string> = {
  read_file: "read files",
  write_file: "write files",
  list_files: "list a folder",
  glob: "find files by name",
  grep: "search file contents",
  bash: "run commands (sandboxed, no network)",
  http_get: "fetch from allowed hosts",
};
const toolChoices: AgentFieldChoice[] = AgentToolSchema.options.map((value) => ({ value, label: TOOL_LABELS[value] }));

export const tools = field({
  name: "tools",
  label: "Tools",
  input: { type: "checklist", options: toolChoices },
  whenEmpty: "blank",
  default: [...DEFAULT_AGENT_TOOLS],
});

export const allowedHosts = field({
  name: "allowedHosts",
  label: "Hosts http_get may reach",
  hint: "one per line: example.com, or *.example.com for its subdomains",
  input: { type: "list", rows: 2, split: "words", mono: false },
  whenEmpty: "default",
  shownWhen: { field: "tools", includes: "http_get" satisfies AgentTool },
});

const name = field({
  name: "name",
  label: "Name",
  hint: "lowercase letters, digits, _; becomes the tools' prefix",
  input: text,
  whenEmpty: "blank",
  createOnly: true,
});
const workdir = field({ name: "workdir", label: "Workdir", hint: "~ allowed", input: text, whenEmpty: "unchanged" });
const model = field({ name: "model", label: "Default model", hint: "empty: the agent's default", input: text, whenEmpty: "default" });
const timeout = field({ name: "timeoutS", label: "Timeout (s)", input: number, whenEmpty: "unchanged" });
const parallel = field({ name: "maxConcurrent", label: "Parallel jobs", input: number, whenEmpty: "unchanged" });
const runnerLabel = field({
  name: "runnerLabel",
  label: "Runner label",
  hint: "empty: this server runs its jobs; e.g. gpu: a corral runner with that label does (PostgreSQL registry)",
  input: text,
  whenEmpty: "default",
});
const worktree = field({
  name: "worktree",
  label: "Each job in a git worktree of its own",
  hint: "needs a workdir in a git repository; a launch can say otherwise",
  input: { type: "toggle" },
  whenEmpty: "unchanged",
});
const sessions = field({
  name: "sessions",
  label: "Hub sessions",
  hint: "the conversation sessions it takes part in, e.g. review build-42; empty: every session (its MCP tools are not limited)",
  input: { type: "list", rows: 1, split: "words", mono: true },
  whenEmpty: "blank",
});
const env = field({ name: "env", label: "Environment, KEY=VALUE per line", input: { type: "env", rows: 2 }, whenEmpty: "blank" });
const description = field({ name: "description", label: "Description", input: text, whenEmpty: "blank", wide: true });

/**
 * A kind's fields around those every agent has: `connection` (what it runs or talks to) first,
 * then the workdir, model, limits, runner label and worktree default, its own `limits`, its `wide`
 * fields (role, tools, arguments), and last the hub sessions, the environment and the description.
 */
export function agentFields(own: { connection?: AgentField[]; limits?: AgentField[]; wide?: AgentField[] } = {}): AgentField[] {
  const all = [
    name,
    ...(own.connection ?? []),
    workdir,
    model,
    timeout,
    parallel,
    runnerLabel,
    worktree,
    ...(own.limits ?? []),
    ...(own.wide ?? []),
    sessions,
    env,
    description,
  ];
  const names = all.map((f) => f.name);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice) throw new Error(`the field ${twice} is declared twice`);
  return all;
}

/** A CLI kind's fields: its binary can be overridden, and `wide` are those its CLI has options for (Claude Code's role and tools). */
export const cliFields = (wide: AgentField[] = []): AgentField[] => agentFields({ connection: [binaryOverride], wide });
