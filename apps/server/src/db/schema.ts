import { sql } from "drizzle-orm";
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type {
  AcpPermissions,
  AgentKind,
  AgentSource,
  AgentTool,
  AuditAction,
  CancelSource,
  FileChange,
  InvocationRecord,
  JobOrigin,
  JobStatus,
  ModelApi,
  OutputStream,
  RetryPolicy,
  JobWorktree,
  SandboxMode,
} from "@corral/shared";

export const agents = sqliteTable("agents", {
  name: text("name").primaryKey(),
  kind: text("kind").$type<AgentKind>().notNull(),
  provider: text("provider").notNull(),
  model: text("model"),
  workdir: text("workdir").notNull(),
  timeoutS: integer("timeout_s").notNull(),
  maxConcurrent: integer("max_concurrent").notNull(),
  env: text("env", { mode: "json" }).$type<Record<string, string>>().notNull(),
  enabled: integer("enabled", { mode: "boolean" }).notNull(),
  command: text("command"),
  args: text("args", { mode: "json" }).$type<string[]>(),
  baseUrl: text("base_url"),
  description: text("description").notNull().default(""),
  retry: text("retry", { mode: "json" }).$type<RetryPolicy>(),
  /** How CLI workers are confined (agents/sandbox.ts). */
  sandbox: text("sandbox").$type<SandboxMode>().notNull().default("none"),
  /** Its jobs run in a git worktree of their own unless a launch says otherwise. */
  worktree: integer("worktree", { mode: "boolean" }).notNull().default(false),
  /** `api` agents (agents/kinds/api.ts): the API's wire format and the variable that holds its key. */
  api: text("api").$type<ModelApi>(),
  apiKeyEnv: text("api_key_env"),
  /** In-process agents: system prompt, tools, http_get's hosts, tool-loop steps. */
  role: text("role"),
  tools: text("tools", { mode: "json" }).$type<AgentTool[]>(),
  allowedHosts: text("allowed_hosts", { mode: "json" }).$type<string[]>(),
  maxSteps: integer("max_steps"),
  /** `acp` agents: how the agent's permission requests are answered (agents/acp/permissions.ts). */
  permissions: text("permissions").$type<AcpPermissions>(),
  /** `file`: declared in the config file (CORRAL_CONFIG), which is where it is edited. */
  source: text("source").$type<AgentSource>().notNull().default("registry"),
  /** Its jobs are run by a `corral runner` announcing this label, never by the server; null: the server runs them. */
  runnerLabel: text("runner_label"),
  /** The conversation hub's sessions it takes part in; empty: every session. */
  sessions: text("sessions", { mode: "json" }).$type<string[]>().notNull().default([]),
  builtin: integer("builtin", { mode: "boolean" }).notNull(),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
});

export const jobs = sqliteTable(
  "jobs",
  {
    id: text("id").primaryKey(),
    agent: text("agent")
      .notNull()
      .references(() => agents.name, { onUpdate: "cascade" }),
    status: text("status").$type<JobStatus>().notNull(),
    prompt: text("prompt").notNull(),
    workdir: text("workdir").notNull(),
    model: text("model"),
    timeoutS: integer("timeout_s").notNull(),
    origin: text("origin").$type<JobOrigin>().notNull(),
    invocation: text("invocation", { mode: "json" }).$type<InvocationRecord>(),
    pid: integer("pid"),
    pidStart: integer("pid_start"),
    exitCode: integer("exit_code"),
    error: text("error"),
    finalText: text("final_text"),
    outputBytes: integer("output_bytes").notNull().default(0),
    usageModel: text("usage_model"),
    inputTokens: integer("input_tokens"),
    outputTokens: integer("output_tokens"),
    cachedInputTokens: integer("cached_input_tokens"),
    costUsd: real("cost_usd"),
    costSource: text("cost_source").$type<"reported" | "estimated">(),
    /** The agent's provider at launch, so history keeps its payer when an agent changes. */
    provider: text("provider"),
    attempt: integer("attempt").notNull().default(1),
    /** The retry policy in force for this job (its own, else its agent's at launch). */
    retry: text("retry", { mode: "json" }).$type<RetryPolicy>(),
    maxCostUsd: real("max_cost_usd"),
    maxTokens: integer("max_tokens"),
    createdAt: integer("created_at").notNull(),
    startedAt: integer("started_at"),
    endedAt: integer("ended_at"),
    /** The first cancel request, stored before the worker is stopped: a restart finishes what it asked for. */
    cancelRequestedAt: integer("cancel_requested_at"),
    cancelledBy: text("cancelled_by").$type<CancelSource>(),
    cancelClient: text("cancel_client"),
    /** When the worker's group was sent SIGKILL, having outlived the grace period after SIGTERM. */
    killedAt: integer("killed_at"),
    /** The first job of the conversation this job belongs to; null for a job that started none (it is its own). */
    conversationId: text("conversation_id"),
    /** The earlier job of the same agent this job continues (`session` at launch). */
    followUpOf: text("follow_up_of"),
    /** The worker's own session id (Claude Code's session_id, Codex's thread id…), when it reported one. */
    workerSession: text("worker_session"),
    /** The git worktree the job runs in (`worktree: true` at launch; a follow-up's is its earlier turn's), and its state. */
    worktree: text("worktree", { mode: "json" }).$type<JobWorktree>(),
    /** The first job of a launch to several agents this job was one of; null for a job launched alone. */
    groupId: text("group_id"),
    /** The job this one was relaunched from (Relaunch, Edit and relaunch: `relaunchOf` at launch); null for a job launched afresh. */
    relaunchOf: text("relaunch_of"),
    /** The runner (runners.id) that claimed the job; null: the server itself runs it. */
    runner: text("runner"),
    /**
     * The job's place in the registry, 1, 2, 3… in the order jobs were added: the jobs list's
     * order (newest first) and the rowid of the jobs_search text index. Set by the
     * jobs_search_insert trigger (drizzle/0008), never by the code.
     */
    seq: integer("seq"),
  },
  (t) => [
    index("jobs_created_idx").on(t.createdAt),
    index("jobs_agent_created_idx").on(t.agent, t.createdAt),
    index("jobs_provider_created_idx").on(t.provider, t.createdAt),
    // The jobs list: one index per filter, each ending in seq so a page is read in order and
    // counted without touching the rows. jobs_seq_idx carries agent and status so a text
    // search checks them without reading a row.
    index("jobs_seq_idx").on(t.seq, t.agent, t.status),
    index("jobs_status_idx").on(t.status, t.seq),
    index("jobs_agent_seq_idx").on(t.agent, t.seq),
    index("jobs_agent_status_seq_idx").on(t.agent, t.status, t.seq),
    // Every launch asks whether its workdir is busy (a queued or running job there).
    index("jobs_workdir_status_idx").on(t.workdir, t.status),
    // A job page shows its conversation's thread.
    index("jobs_conversation_idx").on(t.conversationId, t.seq),
    // A job page links to the jobs launched with it.
    index("jobs_group_idx").on(t.groupId, t.seq),
    // A job page lists the jobs relaunched from it.
    index("jobs_relaunch_idx").on(t.relaunchOf, t.seq),
  ],
);

/** What Corral last learned about each model of each Ollama server, with when it learned it. */
export const ollamaModels = sqliteTable(
  "ollama_models",
  {
    baseUrl: text("base_url").notNull(),
    model: text("model").notNull(),
    /** The listing's facts (capabilities, context length, size, cloud…) as last read. */
    facts: text("facts", { mode: "json" }).$type<Record<string, unknown>>(),
    checkedAt: integer("checked_at"),
    probeOutcome: text("probe_outcome"),
    probeDetail: text("probe_detail"),
    probedAt: integer("probed_at"),
  },
  (t) => [primaryKey({ columns: [t.baseUrl, t.model] })],
);

/** What each job did to its workdir: one row per path, the path's latest change (see jobs/file-watcher.ts). */
export const jobFileChanges = sqliteTable(
  "job_files",
  {
    jobId: text("job_id")
      .notNull()
      .references(() => jobs.id, { onDelete: "cascade" }),
    /** Relative to the job's workdir, `/`-separated. */
    path: text("path").notNull(),
    change: text("change").$type<FileChange>().notNull(),
    /** Bytes after the change; null when deleted. */
    size: integer("size"),
    at: integer("at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.path] })],
);

/** Prices set by users; they win over the shipped table. */
export const priceOverrides = sqliteTable(
  "price_overrides",
  {
    provider: text("provider").notNull(),
    model: text("model").notNull(),
    inputPerM: real("input_per_m").notNull(),
    outputPerM: real("output_per_m").notNull(),
    cachedInputPerM: real("cached_input_per_m"),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.provider, t.model] })],
);

/** Spending limits per provider and period (the server's local day or month). */
export const budgets = sqliteTable(
  "budgets",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    provider: text("provider").notNull(),
    period: text("period").$type<"day" | "month">().notNull(),
    maxCostUsd: real("max_cost_usd"),
    maxTokens: integer("max_tokens"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [uniqueIndex("budgets_provider_period_idx").on(t.provider, t.period)],
);

/** Each try of a job; its output is the part of the job's log between two cursors. */
export const jobAttempts = sqliteTable(
  "job_attempts",
  {
    jobId: text("job_id")
      .notNull()
      .references(() => jobs.id, { onDelete: "cascade" }),
    attempt: integer("attempt").notNull(),
    status: text("status").$type<JobStatus>().notNull(),
    exitCode: integer("exit_code"),
    error: text("error"),
    startedAt: integer("started_at").notNull(),
    endedAt: integer("ended_at"),
    outputStart: integer("output_start").notNull(),
    outputEnd: integer("output_end"),
    /** This attempt's own usage, as its worker reported it, and its cost; the job's columns hold the sum. */
    usageModel: text("usage_model"),
    inputTokens: integer("input_tokens"),
    outputTokens: integer("output_tokens"),
    cachedInputTokens: integer("cached_input_tokens"),
    costUsd: real("cost_usd"),
    costSource: text("cost_source").$type<"reported" | "estimated">(),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.attempt] })],
);

/**
 * The conversation of an in-process worker's job (the Ollama tool loop), message by message as it
 * ran: what a follow-up of the job sends the model again. The system prompt is not kept.
 */
export const jobMessages = sqliteTable(
  "job_messages",
  {
    jobId: text("job_id")
      .notNull()
      .references(() => jobs.id, { onDelete: "cascade" }),
    /** 0, 1, 2… in the order the messages joined the conversation. */
    seq: integer("seq").notNull(),
    role: text("role").$type<"user" | "assistant" | "tool">().notNull(),
    content: text("content").notNull(),
    /** An assistant message's tool calls, as the model made them. */
    toolCalls: text("tool_calls", { mode: "json" }).$type<Record<string, unknown>[]>(),
    /** A tool message's tool. */
    toolName: text("tool_name"),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.seq] })],
);

/** Who launched or cancelled which job, through which door and client. Append-only. */
export const auditLog = sqliteTable(
  "audit_log",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    at: integer("at").notNull(),
    action: text("action").$type<AuditAction>().notNull(),
    jobId: text("job_id").notNull(),
    agent: text("agent").notNull(),
    door: text("door").$type<JobOrigin>().notNull(),
    /** MCP clientInfo `name/version`, or the REST caller's x-corral-client / user-agent. */
    client: text("client"),
  },
  (t) => [index("audit_log_at_idx").on(t.at), index("audit_log_job_idx").on(t.jobId)],
);

/** Browser sessions: the panel's cookie holds a random secret; only its SHA-256 is stored. */
export const browserSessions = sqliteTable(
  "browser_sessions",
  {
    /** Public id, shown on the Connect page and used to sign one session out. */
    id: text("id").primaryKey(),
    secretHash: text("secret_hash").notNull(),
    userAgent: text("user_agent").notNull().default(""),
    createdAt: integer("created_at").notNull(),
    lastSeenAt: integer("last_seen_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [uniqueIndex("browser_sessions_secret_hash").on(t.secretHash)],
);

/**
 * MCP tasks (spec revision 2025-11-25): a task-augmented `<agent>_run` and the job behind it. The
 * job holds the state; a task adds its id, who may list it, how long it is kept and whether it
 * was cancelled (a cancelled task stays cancelled whatever its job did next).
 */
export const mcpTasks = sqliteTable(
  "mcp_tasks",
  {
    /** A random UUID, told only to the client that created the task. */
    id: text("id").primaryKey(),
    jobId: text("job_id")
      .notNull()
      .references(() => jobs.id, { onDelete: "cascade" }),
    /** The MCP session that created it, or that last reached it by its id: the one that lists it. */
    sessionId: text("session_id").notNull(),
    createdAt: integer("created_at").notNull(),
    ttlMs: integer("ttl_ms").notNull(),
    cancelledAt: integer("cancelled_at"),
  },
  (t) => [index("mcp_tasks_session_idx").on(t.sessionId, t.createdAt, t.id), index("mcp_tasks_job_idx").on(t.jobId)],
);

/**
 * Agents that registered in a conversation session, one row per name: the last registration's
 * label and times. A row whose `endedAt` is null belongs to a registration whose handle works
 * until it goes unused for CORRAL_HUB_LEASE_S after `lastSeenAt`; it is online, holding its name,
 * until `leaseUntil` (its presence: each sign of its client moves that on). Both outlive a restart.
 */
export const hubAgents = sqliteTable(
  "hub_agents",
  {
    session: text("session").notNull(),
    name: text("name").notNull(),
    label: text("label"),
    registeredAt: integer("registered_at").notNull(),
    lastSeenAt: integer("last_seen_at").notNull(),
    /** When its last registration ended (left, replaced, its lease ran out); null while it lives. */
    endedAt: integer("ended_at"),
    /** sha256 (hex) of the live registration's handle, never the handle: a row read does not give it. Null once ended. */
    handleHash: text("handle_hash"),
    /** Until when the live registration is online and holds its name, unless its client shows again. */
    leaseUntil: integer("lease_until"),
    /**
     * Its live target while the registration lives (conversations/live-target.ts): the server a
     * message to it is posted into, the OpenCode session (null: the server's latest), and the
     * server's password, a secret never answered back. All null once the registration ends.
     */
    targetUrl: text("target_url"),
    targetSession: text("target_session"),
    targetPassword: text("target_password"),
  },
  (t) => [
    primaryKey({ columns: [t.session, t.name] }),
    uniqueIndex("hub_agents_handle_idx").on(t.handleHash),
    index("hub_agents_live_idx").on(t.leaseUntil).where(sql`ended_at is null`),
  ],
);

/** Messages between agents of a session. The id is the cursor: monotonic over the whole server. */
export const hubMessages = sqliteTable(
  "hub_messages",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    session: text("session").notNull(),
    from: text("from_agent").notNull(),
    to: text("to_agent").notNull(),
    text: text("text").notNull(),
    /** The job a worker ran for this message, or the job whose answer this message is. */
    jobId: text("job_id"),
    at: integer("at").notNull(),
    /** When its recipient took it (a receive); null while it waits in the inbox. A message to a worker is taken at once. */
    receivedAt: integer("received_at"),
    /** A message to a worker whose answer is not stored yet: a restart waits for its job again. */
    answerPending: integer("answer_pending", { mode: "boolean" }).notNull().default(false),
  },
  (t) => [
    index("hub_messages_session_idx").on(t.session, t.id),
    index("hub_messages_from_idx").on(t.session, t.from, t.id),
    index("hub_messages_to_idx").on(t.session, t.to, t.id),
    index("hub_messages_inbox_idx").on(t.session, t.to, t.id).where(sql`received_at is null`),
    index("hub_messages_pending_idx").on(t.id).where(sql`answer_pending = 1`),
  ],
);

/** Each `corral runner` process that announced itself: it runs the jobs of agents asking for one of its labels. */
export const runners = sqliteTable("runners", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  labels: text("labels", { mode: "json" }).$type<string[]>().notNull(),
  hostname: text("hostname").notNull(),
  version: text("version").notNull(),
  startedAt: integer("started_at").notNull(),
  /** Its last sign of life; silent past its lease, its running jobs are lost. */
  heartbeatAt: integer("heartbeat_at").notNull(),
  /** When it said it was stopping; null while it runs (or if it died without saying). */
  stoppedAt: integer("stopped_at"),
});

/**
 * Output of jobs a runner runs, chunk by chunk in order (seq 1, 2, 3… per job), for the server to
 * copy into its own output log: every read of output there works as for its own jobs.
 */
export const jobOutput = sqliteTable(
  "job_output",
  {
    jobId: text("job_id")
      .notNull()
      .references(() => jobs.id, { onDelete: "cascade" }),
    seq: integer("seq").notNull(),
    stream: text("stream").$type<OutputStream>().notNull(),
    /** UTF-8 text, whole characters, as the job's output log holds it. */
    data: text("data").notNull(),
    at: integer("at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.seq] })],
);

/** What a browsing request asks a runner for: a directory's entries, a window of a file, or its bytes. */
export type RunnerRequestKind = "list" | "read" | "raw" | "worktree";

/**
 * Browsing requests for workdirs that are on a runner's machine: the server stores one and
 * NOTIFYs its id, the runner answers in the same row and NOTIFYs back. Rows live for seconds:
 * the server deletes each once it has read the answer (or given up), and sweeps old ones.
 */
export const runnerRequests = sqliteTable(
  "runner_requests",
  {
    id: text("id").primaryKey(),
    /** The runner (runners.id) asked. */
    runner: text("runner")
      .notNull()
      .references(() => runners.id, { onDelete: "cascade" }),
    kind: text("kind").$type<RunnerRequestKind>().notNull(),
    /** As the user gave it; the runner resolves and confines it as the server would. */
    path: text("path").notNull(),
    /** read: the window asked for. */
    readOffset: integer("read_offset").notNull(),
    readLimit: integer("read_limit").notNull(),
    /** raw: the `Range` header, if one was sent (the runner knows the file's size). */
    range: text("range"),
    /** worktree: the action on a job's worktree, as JSON (runner/worktree-requests.ts). */
    args: text("args"),
    askedAt: integer("asked_at").notNull(),
    answeredAt: integer("answered_at"),
    /** JSON: the DirListing or FileRead, or for raw the file's facts and its bytes in base64 (capped). */
    answer: text("answer"),
    /** JSON: the refusal as the server's own would be ({status, code, error, field}). */
    error: text("error"),
  },
  (t) => [index("runner_requests_runner_idx").on(t.runner, t.answeredAt)],
);

export type AgentRow = typeof agents.$inferSelect;
export type JobOutputRow = typeof jobOutput.$inferSelect;
export type RunnerRow = typeof runners.$inferSelect;
export type RunnerRequestRow = typeof runnerRequests.$inferSelect;
export type JobRow = typeof jobs.$inferSelect;
export type OllamaModelRow = typeof ollamaModels.$inferSelect;
export type JobFileRow = typeof jobFileChanges.$inferSelect;
export type PriceOverrideRow = typeof priceOverrides.$inferSelect;
export type BudgetRow = typeof budgets.$inferSelect;
export type JobAttemptRow = typeof jobAttempts.$inferSelect;
export type AuditRow = typeof auditLog.$inferSelect;
export type BrowserSessionRow = typeof browserSessions.$inferSelect;
export type McpTaskRow = typeof mcpTasks.$inferSelect;
export type JobMessageRow = typeof jobMessages.$inferSelect;
export type HubAgentRow = typeof hubAgents.$inferSelect;
export type HubMessageRow = typeof hubMessages.$inferSelect;
