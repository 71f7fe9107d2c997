import { z } from "zod";
import { AgentKindSchema, SandboxModeSchema } from "./enums.js";
import { HubSessionNameSchema } from "./hub-names.js";
import { RetryPolicySchema } from "./retry.js";
import { RunnerLabelSchema } from "./runners.js";

export const AgentNameSchema = z.string().regex(/^[a-z][a-z0-9_]{0,39}$/, "use 1-40 lowercase letters, digits or _, starting with a letter");

/**
 * A model name, as every door takes it (agent settings, launches, MCP tools). Workers get it as a
 * command-line value, so it may not look like an option or carry control characters.
 */
export const ModelSchema = z
  .string()
  .min(1)
  .max(200)
  .refine((model) => !model.startsWith("-"), "a model name cannot start with '-' (it would read as a command-line option)")
  .refine((model) => !/[\u0000-\u001f\u007f]/.test(model), "a model name cannot contain control characters");

const EnvNameSchema = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "not a valid variable name");

/** The wire format of a model API an `api` agent talks to; `openai` also covers OpenAI-compatible servers (OpenRouter, vLLM, LM Studio, a LiteLLM proxy, Ollama's /v1). */
export const ModelApiSchema = z.enum(["openai", "anthropic", "google"]);
export type ModelApi = z.infer<typeof ModelApiSchema>;

/** Tools an in-process agent may be given; file tools stay inside the job's workdir, `bash` runs only in the bubblewrap sandbox, `http_get` only to the agent's allowed hosts. */
export const AgentToolSchema = z.enum(["read_file", "write_file", "list_files", "glob", "grep", "bash", "http_get"]);
export type AgentTool = z.infer<typeof AgentToolSchema>;
/** An API agent's tools when it names none: the workdir's files, nothing that runs commands or reaches the network. */
export const DEFAULT_AGENT_TOOLS: readonly AgentTool[] = ["read_file", "write_file", "list_files", "glob", "grep"];

/**
 * How an `acp` agent's permission requests are answered: `workdir` allows reading and editing files
 * inside the job's workdir and denies the rest (commands, fetches, anything outside); `deny` denies
 * every request; `allow` allows every one (meant for agents run in the sandbox).
 */
export const AcpPermissionsSchema = z.enum(["workdir", "deny", "allow"]);
export type AcpPermissions = z.infer<typeof AcpPermissionsSchema>;

/** Hub sessions one agent may be limited to: a longer list is every session (leave it empty). */
export const MAX_AGENT_SESSIONS = 100;

/**
 * The conversation hub's sessions an agent takes part in (docs/conversations.md): empty, every
 * session. Each is a session's name as the hub spells it, named once.
 */
export const AgentSessionsSchema = z
  .array(HubSessionNameSchema)
  .max(MAX_AGENT_SESSIONS, `name at most ${MAX_AGENT_SESSIONS} sessions, or none for every session`)
  .superRefine((sessions, ctx) => {
    if (sessions.length > MAX_AGENT_SESSIONS) return;
    const seen = new Set<string>();
    for (const [i, session] of sessions.entries()) {
      if (seen.has(session)) ctx.addIssue({ code: "custom", path: [i], message: `${session} is named twice; name each session once` });
      seen.add(session);
    }
  });

/** Where an agent is defined: the registry (panel, REST) or the config file (`CORRAL_CONFIG`), edited only there. */
export const AgentSourceSchema = z.enum(["registry", "file"]);
export type AgentSource = z.infer<typeof AgentSourceSchema>;

const EnvSchema = z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "not a valid variable name"), z.string());

/** Fields a user may set on any agent. */
const AgentFieldsSchema = z.object({
  provider: z.string().min(1).max(40),
  model: ModelSchema.nullable(),
  workdir: z.string().min(1).max(4096),
  timeoutS: z
    .number()
    .int()
    .min(1)
    .max(7 * 24 * 3600),
  maxConcurrent: z.number().int().min(1).max(256),
  env: EnvSchema,
  enabled: z.boolean(),
  /** Executable for `command` agents, or an override of the CLI binary for the others. */
  command: z.string().min(1).max(4096).nullable(),
  /** Argument template for `command` agents: `{prompt}`, `{workdir}`, `{model}` are replaced. */
  args: z.array(z.string().max(4096)).max(200).nullable(),
  /** Base URL of the server for `ollama` agents. */
  baseUrl: z.url().nullable(),
  description: z.string().max(2000),
  /** When a failed job is tried again; null never retries. */
  retry: RetryPolicySchema.nullable(),
  /** `bwrap`: run CLI workers in a bubblewrap sandbox (see docs/security.md, "Sandbox"). */
  sandbox: SandboxModeSchema,
  /** Its jobs run in a git worktree of their own unless a launch says `worktree: false` (docs/jobs.md, "A worktree per job"). */
  worktree: z.boolean(),
  /** `api` agents: the model API's wire format (with `baseUrl`, `model`). */
  api: ModelApiSchema.nullable(),
  /** `api` agents: the environment variable that holds the API key; the key itself is never stored or shown. */
  apiKeyEnv: EnvNameSchema.refine(
    (name) => !name.startsWith("CORRAL_"),
    "Corral's own settings never serve as a model API's key; name the variable that holds the key",
  ).nullable(),
  /** The agent's role: the system prompt an in-process agent's model gets. */
  role: z.string().max(100_000).nullable(),
  /** The tools an in-process agent's model may call; null: its kind's default. */
  tools: z.array(AgentToolSchema).max(AgentToolSchema.options.length).nullable(),
  /** Hosts `http_get` may reach (exact names, or `*.example.com`). */
  allowedHosts: z.array(z.string().min(1).max(253)).max(100).nullable(),
  /** Model steps (turns of the tool loop) before a job stops. */
  maxSteps: z.number().int().min(1).max(1000).nullable(),
  /** `acp` agents: how its permission requests are answered; null: `workdir`. */
  permissions: AcpPermissionsSchema.nullable(),
  /**
   * Its jobs are run by a `corral runner` announcing this label (CORRAL_RUNNER_LABELS), never by
   * the server itself; null: the server runs them. Needs the registry in PostgreSQL.
   */
  runnerLabel: RunnerLabelSchema.nullable(),
  /** The hub sessions it takes part in (lists it, relays to it); empty: every session. Its MCP tools are not limited. */
  sessions: AgentSessionsSchema,
});

export const CreateAgentBodySchema = AgentFieldsSchema.partial().extend({ name: AgentNameSchema, kind: AgentKindSchema }).strict();
export type CreateAgentBody = z.infer<typeof CreateAgentBodySchema>;

export const UpdateAgentBodySchema = AgentFieldsSchema.partial().strict();
export type UpdateAgentBody = z.infer<typeof UpdateAgentBodySchema>;

export const AgentAvailabilitySchema = z.object({
  available: z.boolean(),
  /** The resolved binary (or server URL) when available. */
  resolved: z.string().nullable(),
  /** What to do when it is not available. */
  hint: z.string().nullable(),
  /** What the CLI's `--version` says (first version-like line), when it answered in time. */
  version: z.string().nullable(),
});
export type AgentAvailability = z.infer<typeof AgentAvailabilitySchema>;

export const AgentSchema = AgentFieldsSchema.extend({
  name: AgentNameSchema,
  kind: AgentKindSchema,
  builtin: z.boolean(),
  source: AgentSourceSchema,
  /** Its kind reads the worker's output as events, so the panel offers a Readable view. */
  readable: z.boolean(),
  /**
   * Its kind's answer is the worker's output as printed (a plain-text CLI): the panel shows it
   * once, as the output, not again as an answer.
   */
  answerIsOutput: z.boolean(),
  /** Its kind continues a conversation: a job of it can be followed up (`session` at launch). */
  resumes: z.boolean(),
  /** The model a job gets when it names none (agent setting, else the CORRAL_<AGENT>_MODEL default). */
  effectiveModel: z.string().nullable(),
  createdAt: z.number(),
  updatedAt: z.number(),
});
export type Agent = z.infer<typeof AgentSchema>;

export const AgentWithAvailabilitySchema = AgentSchema.extend({ availability: AgentAvailabilitySchema });
export type AgentWithAvailability = z.infer<typeof AgentWithAvailabilitySchema>;

export const AgentListSchema = z.object({ agents: z.array(AgentWithAvailabilitySchema) });
export type AgentList = z.infer<typeof AgentListSchema>;
