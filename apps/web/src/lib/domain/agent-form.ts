import {
  type AgentTool,
  type AgentWithAvailability,
  type CreateAgentBody,
  DEFAULT_AGENT_TOOLS,
  type ModelApi,
  ModelApiSchema,
  type UpdateAgentBody,
} from "@corral/shared";

/** The kinds the Add-agent dialog creates: any executable, or a model behind an API. */
export type NewAgentKind = "command" | "api";

/** The agent form as text fields; converted to a request body on save. */
export interface AgentFormState {
  name: string;
  model: string;
  workdir: string;
  timeoutS: string;
  maxConcurrent: string;
  description: string;
  command: string;
  /** One argument per line. */
  args: string;
  baseUrl: string;
  /** KEY=VALUE per line. */
  env: string;
  /** API agents: the API's wire format, the variable holding the key, the step limit, the tools, the hosts http_get may reach (one per line). */
  api: ModelApi;
  apiKeyEnv: string;
  runnerLabel: string;
  maxSteps: string;
  tools: AgentTool[];
  allowedHosts: string;
  /** In-process agents (API, Ollama): the system prompt. */
  role: string;
}

export function formFromAgent(a: AgentWithAvailability): AgentFormState {
  return {
    name: a.name,
    model: a.model ?? "",
    workdir: a.workdir,
    timeoutS: String(a.timeoutS),
    maxConcurrent: String(a.maxConcurrent),
    description: a.description,
    command: a.command ?? "",
    args: (a.args ?? []).join("\n"),
    baseUrl: a.baseUrl ?? "",
    env: Object.entries(a.env)
      .map(([k, v]) => `${k}=${v}`)
      .join("\n"),
    api: a.api ?? "openai",
    apiKeyEnv: a.apiKeyEnv ?? "",
    runnerLabel: a.runnerLabel ?? "",
    maxSteps: a.maxSteps === null ? "" : String(a.maxSteps),
    tools: a.tools ?? [...DEFAULT_AGENT_TOOLS],
    allowedHosts: (a.allowedHosts ?? []).join("\n"),
    role: a.role ?? "",
  };
}

export const newAgentForm = (kind: NewAgentKind): AgentFormState => ({
  name: "",
  model: "",
  workdir: "",
  timeoutS: "",
  maxConcurrent: "",
  description: "",
  command: "",
  args: kind === "command" ? "{prompt}" : "",
  baseUrl: "",
  env: "",
  api: "openai",
  apiKeyEnv: "",
  runnerLabel: "",
  maxSteps: "",
  tools: [...DEFAULT_AGENT_TOOLS],
  allowedHosts: "",
  role: "",
});

export const MODEL_API_LABELS: Record<ModelApi, string> = {
  openai: "OpenAI or OpenAI-compatible",
  anthropic: "Anthropic",
  google: "Google",
};
export const MODEL_APIS = ModelApiSchema.options;

export type FormResult<T> = { body: T } | { field: string; message: string };

function parseEnv(text: string): FormResult<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line) continue;
    const eq = line.indexOf("=");
    if (eq <= 0) return { field: "env", message: `"${line}" is not KEY=VALUE` };
    env[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return { body: env };
}

function int(text: string, field: string): FormResult<number | undefined> {
  if (!text.trim()) return { body: undefined };
  const n = Number(text.trim());
  return Number.isInteger(n) ? { body: n } : { field, message: "give a whole number" };
}

/** The server-address field of kinds that talk to a server instead of running a binary; null for the others. */
export function serverUrlField(kind: string): { label: string; hint: string } | null {
  if (kind === "ollama") return { label: "Ollama URL", hint: "empty: CORRAL_OLLAMA_URL" };
  if (kind === "opencode_server") return { label: "OpenCode server URL", hint: "the address opencode serve prints" };
  return null;
}

/** Only the fields a user can set; empty optional fields become null (the agent's default). */
export function updateBody(form: AgentFormState, kind: string): FormResult<UpdateAgentBody> {
  const env = parseEnv(form.env);
  if ("field" in env) return env;
  const timeout = int(form.timeoutS, "timeoutS");
  if ("field" in timeout) return timeout;
  const max = int(form.maxConcurrent, "maxConcurrent");
  if ("field" in max) return max;
  const body: UpdateAgentBody = {
    model: form.model.trim() || null,
    description: form.description,
    env: env.body,
    runnerLabel: form.runnerLabel.trim() || null,
  };
  if (form.workdir.trim()) body.workdir = form.workdir.trim();
  if (timeout.body !== undefined) body.timeoutS = timeout.body;
  if (max.body !== undefined) body.maxConcurrent = max.body;
  if (kind === "command") {
    body.command = form.command.trim() || null;
    body.args = form.args.split("\n").filter((a) => a.length > 0);
  } else if (serverUrlField(kind)) {
    body.baseUrl = form.baseUrl.trim() || null;
    if (kind === "ollama") body.role = form.role.trim() || null;
  } else if (kind === "api") {
    const steps = int(form.maxSteps, "maxSteps");
    if ("field" in steps) return steps;
    const hosts = form.allowedHosts
      .split(/[\s,]+/)
      .map((h) => h.trim())
      .filter(Boolean);
    Object.assign(body, {
      api: form.api,
      baseUrl: form.baseUrl.trim() || null,
      apiKeyEnv: form.apiKeyEnv.trim() || null,
      role: form.role.trim() || null,
      tools: form.tools,
      allowedHosts: hosts.length ? hosts : null,
      maxSteps: steps.body ?? null,
    });
  } else {
    body.command = form.command.trim() || null;
  }
  return { body };
}

export function createBody(form: AgentFormState, kind: NewAgentKind): FormResult<CreateAgentBody> {
  const update = updateBody(form, kind);
  if ("field" in update) return update;
  const { model, ...rest } = update.body;
  const body: CreateAgentBody = { ...rest, name: form.name.trim(), kind };
  if (model) body.model = model;
  if (!body.command) delete body.command;
  // A new agent without a label needs none said (and a SQLite registry takes no label at all).
  if (!body.runnerLabel) delete body.runnerLabel;
  return { body };
}
