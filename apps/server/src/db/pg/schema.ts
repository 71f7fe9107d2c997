// The registry in PostgreSQL: the same tables, columns and row types as the SQLite schema
// (../schema.ts), so both dialects' repositories hand out the same rows. Times are milliseconds
// since the epoch in bigint columns read as numbers; JSON is jsonb; flags are booleans. A test
// (pg-schema.test.ts) keeps the two schemas' tables, columns and row types the same.
import { sql } from "drizzle-orm";
import { bigint, boolean, doublePrecision, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";
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

/** Milliseconds since the epoch, or bytes: past 2^31, so bigint, and still exact as a JS number. */
const ms = (name: string) => bigint(name, { mode: "number" });

export const agents = pgTable("agents", {
  name: text("name").primaryKey(),
  kind: text("kind").$type<AgentKind>().notNull(),
  provider: text("provider").notNull(),
  model: text("model"),
  workdir: text("workdir").notNull(),
  timeoutS: integer("timeout_s").notNull(),
  maxConcurrent: integer("max_concurrent").notNull(),
  env: jsonb("env").$type<Record<string, string>>().notNull(),
  enabled: boolean("enabled").notNull(),
  command: text("command"),
  args: jsonb("args").$type<string[]>(),
  baseUrl: text("base_url"),
  description: text("description").notNull().default(""),
  retry: jsonb("retry").$type<RetryPolicy>(),
  sandbox: text("sandbox").$type<SandboxMode>().notNull().default("none"),
  /** Its jobs run in a git worktree of their own unless a launch says otherwise. */
  worktree: boolean("worktree").notNull().default(false),
  api: text("api").$type<ModelApi>(),
  apiKeyEnv: text("api_key_env"),
  role: text("role"),
  tools: jsonb("tools").$type<AgentTool[]>(),
  allowedHosts: jsonb("allowed_hosts").$type<string[]>(),
  maxSteps: integer("max_steps"),
  /** `acp` agents: how the agent's permission requests are answered (agents/acp/permissions.ts). */
  permissions: text("permissions").$type<AcpPermissions>(),
  source: text("source").$type<AgentSource>().notNull().default("registry"),
  runnerLabel: text("runner_label"),
  /** The conversation hub's sessions it takes part in; empty: every session. */
  sessions: jsonb("sessions").$type<string[]>().notNull().default([]),
  builtin: boolean("builtin").notNull(),
  createdAt: ms("created_at").notNull(),
  updatedAt: ms("updated_at").notNull(),
});

export const jobs = pgTable(
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
    invocation: jsonb("invocation").$type<InvocationRecord>(),
    pid: integer("pid"),
    /** The process's start time in clock ticks since boot: past 2^31 on a machine up long enough. */
    pidStart: bigint("pid_start", { mode: "number" }),
    exitCode: integer("exit_code"),
    error: text("error"),
    finalText: text("final_text"),
    outputBytes: bigint("output_bytes", { mode: "number" }).notNull().default(0),
    usageModel: text("usage_model"),
    inputTokens: bigint("input_tokens", { mode: "number" }),
    outputTokens: bigint("output_tokens", { mode: "number" }),
    cachedInputTokens: bigint("cached_input_tokens", { mode: "number" }),
    costUsd: doublePrecision("cost_usd"),
    costSource: text("cost_source").$type<"reported" | "estimated">(),
    provider: text("provider"),
    attempt: integer("attempt").notNull().default(1),
    retry: jsonb("retry").$type<RetryPolicy>(),
    maxCostUsd: doublePrecision("max_cost_usd"),
    maxTokens: bigint("max_tokens", { mode: "number" }),
    createdAt: ms("created_at").notNull(),
    startedAt: ms("started_at"),
    endedAt: ms("ended_at"),
    cancelRequestedAt: ms("cancel_requested_at"),
    cancelledBy: text("cancelled_by").$type<CancelSource>(),
    cancelClient: text("cancel_client"),
    killedAt: ms("killed_at"),
    conversationId: text("conversation_id"),
    followUpOf: text("follow_up_of"),
    workerSession: text("worker_session"),
    /** The git worktree the job runs in (`worktree: true` at launch; a follow-up's is its earlier turn's), and its state. */
    worktree: jsonb("worktree").$type<JobWorktree>(),
    groupId: text("group_id"),
    relaunchOf: text("relaunch_of"),
    runner: text("runner"),
    /** The job's place in the registry, 1, 2, 3… in the order jobs were added: the jobs list's order. */
    seq: bigint("seq", { mode: "number" }).generatedAlwaysAsIdentity(),
  },
  (t) => [
    index("jobs_created_idx").on(t.createdAt),
    index("jobs_agent_created_idx").on(t.agent, t.createdAt),
    index("jobs_provider_created_idx").on(t.provider, t.createdAt),
    uniqueIndex("jobs_seq_idx").on(t.seq),
    index("jobs_status_idx").on(t.status, t.seq),
    index("jobs_agent_seq_idx").on(t.agent, t.seq),
    index("jobs_agent_status_seq_idx").on(t.agent, t.status, t.seq),
    index("jobs_workdir_status_idx").on(t.workdir, t.status),
    index("jobs_conversation_idx").on(t.conversationId, t.seq),
    index("jobs_group_idx").on(t.groupId, t.seq),
    index("jobs_relaunch_idx").on(t.relaunchOf, t.seq),
  ],
);

export const ollamaModels = pgTable(
  "ollama_models",
  {
    baseUrl: text("base_url").notNull(),
    model: text("model").notNull(),
    facts: jsonb("facts").$type<Record<string, unknown>>(),
    checkedAt: ms("checked_at"),
    probeOutcome: text("probe_outcome"),
    probeDetail: text("probe_detail"),
    probedAt: ms("probed_at"),
  },
  (t) => [primaryKey({ columns: [t.baseUrl, t.model] })],
);

export const jobFileChanges = pgTable(
  "job_files",
  {
    jobId: text("job_id")
      .notNull()
      .references(() => jobs.id, { onDelete: "cascade" }),
    path: text("path").notNull(),
    change: text("change").$type<FileChange>().notNull(),
    size: bigint("size", { mode: "number" }),
    at: ms("at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.path] })],
);

export const priceOverrides = pgTable(
  "price_overrides",
  {
    provider: text("provider").notNull(),
    model: text("model").notNull(),
    inputPerM: doublePrecision("input_per_m").notNull(),
    outputPerM: doublePrecision("output_per_m").notNull(),
    cachedInputPerM: doublePrecision("cached_input_per_m"),
    updatedAt: ms("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.provider, t.model] })],
);

export const budgets = pgTable(
  "budgets",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    provider: text("provider").notNull(),
    period: text("period").$type<"day" | "month">().notNull(),
    maxCostUsd: doublePrecision("max_cost_usd"),
    maxTokens: bigint("max_tokens", { mode: "number" }),
    createdAt: ms("created_at").notNull(),
    updatedAt: ms("updated_at").notNull(),
  },
  (t) => [uniqueIndex("budgets_provider_period_idx").on(t.provider, t.period)],
);

export const jobAttempts = pgTable(
  "job_attempts",
  {
    jobId: text("job_id")
      .notNull()
      .references(() => jobs.id, { onDelete: "cascade" }),
    attempt: integer("attempt").notNull(),
    status: text("status").$type<JobStatus>().notNull(),
    exitCode: integer("exit_code"),
    error: text("error"),
    startedAt: ms("started_at").notNull(),
    endedAt: ms("ended_at"),
    outputStart: bigint("output_start", { mode: "number" }).notNull(),
    outputEnd: bigint("output_end", { mode: "number" }),
    /** This attempt's own usage, as its worker reported it, and its cost; the job's columns hold the sum. */
    usageModel: text("usage_model"),
    inputTokens: bigint("input_tokens", { mode: "number" }),
    outputTokens: bigint("output_tokens", { mode: "number" }),
    cachedInputTokens: bigint("cached_input_tokens", { mode: "number" }),
    costUsd: doublePrecision("cost_usd"),
    costSource: text("cost_source").$type<"reported" | "estimated">(),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.attempt] })],
);

export const jobMessages = pgTable(
  "job_messages",
  {
    jobId: text("job_id")
      .notNull()
      .references(() => jobs.id, { onDelete: "cascade" }),
    seq: integer("seq").notNull(),
    role: text("role").$type<"user" | "assistant" | "tool">().notNull(),
    content: text("content").notNull(),
    toolCalls: jsonb("tool_calls").$type<Record<string, unknown>[]>(),
    toolName: text("tool_name"),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.seq] })],
);

export const auditLog = pgTable(
  "audit_log",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    at: ms("at").notNull(),
    action: text("action").$type<AuditAction>().notNull(),
    jobId: text("job_id").notNull(),
    agent: text("agent").notNull(),
    door: text("door").$type<JobOrigin>().notNull(),
    client: text("client"),
  },
  (t) => [index("audit_log_at_idx").on(t.at), index("audit_log_job_idx").on(t.jobId)],
);

export const browserSessions = pgTable(
  "browser_sessions",
  {
    id: text("id").primaryKey(),
    secretHash: text("secret_hash").notNull(),
    userAgent: text("user_agent").notNull().default(""),
    createdAt: ms("created_at").notNull(),
    lastSeenAt: ms("last_seen_at").notNull(),
    expiresAt: ms("expires_at").notNull(),
  },
  (t) => [uniqueIndex("browser_sessions_secret_hash").on(t.secretHash)],
);

export const mcpTasks = pgTable(
  "mcp_tasks",
  {
    id: text("id").primaryKey(),
    jobId: text("job_id")
      .notNull()
      .references(() => jobs.id, { onDelete: "cascade" }),
    sessionId: text("session_id").notNull(),
    createdAt: ms("created_at").notNull(),
    ttlMs: bigint("ttl_ms", { mode: "number" }).notNull(),
    cancelledAt: ms("cancelled_at"),
  },
  (t) => [index("mcp_tasks_session_idx").on(t.sessionId, t.createdAt, t.id), index("mcp_tasks_job_idx").on(t.jobId)],
);

export const hubAgents = pgTable(
  "hub_agents",
  {
    session: text("session").notNull(),
    name: text("name").notNull(),
    label: text("label"),
    registeredAt: ms("registered_at").notNull(),
    lastSeenAt: ms("last_seen_at").notNull(),
    endedAt: ms("ended_at"),
    handleHash: text("handle_hash"),
    leaseUntil: ms("lease_until"),
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

export const hubMessages = pgTable(
  "hub_messages",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    session: text("session").notNull(),
    from: text("from_agent").notNull(),
    to: text("to_agent").notNull(),
    text: text("text").notNull(),
    jobId: text("job_id"),
    at: ms("at").notNull(),
    receivedAt: ms("received_at"),
    answerPending: boolean("answer_pending").notNull().default(false),
  },
  (t) => [
    index("hub_messages_session_idx").on(t.session, t.id),
    index("hub_messages_from_idx").on(t.session, t.from, t.id),
    index("hub_messages_to_idx").on(t.session, t.to, t.id),
    index("hub_messages_inbox_idx").on(t.session, t.to, t.id).where(sql`received_at is null`),
    index("hub_messages_pending_idx").on(t.id).where(sql`answer_pending`),
  ],
);

export const runners = pgTable("runners", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  labels: jsonb("labels").$type<string[]>().notNull(),
  hostname: text("hostname").notNull(),
  version: text("version").notNull(),
  startedAt: ms("started_at").notNull(),
  heartbeatAt: ms("heartbeat_at").notNull(),
  stoppedAt: ms("stopped_at"),
});

export const runnerRequests = pgTable(
  "runner_requests",
  {
    id: text("id").primaryKey(),
    runner: text("runner")
      .notNull()
      .references(() => runners.id, { onDelete: "cascade" }),
    // RunnerRequestKind (../schema.ts): schema-rows.test.ts keeps the two alike.
    kind: text("kind").$type<"list" | "read" | "raw" | "worktree">().notNull(),
    path: text("path").notNull(),
    readOffset: ms("read_offset").notNull(),
    readLimit: integer("read_limit").notNull(),
    range: text("range"),
    /** worktree: the action on a job's worktree, as JSON (runner/worktree-requests.ts). */
    args: text("args"),
    askedAt: ms("asked_at").notNull(),
    answeredAt: ms("answered_at"),
    answer: text("answer"),
    error: text("error"),
  },
  (t) => [index("runner_requests_runner_idx").on(t.runner, t.answeredAt)],
);

export const jobOutput = pgTable(
  "job_output",
  {
    jobId: text("job_id")
      .notNull()
      .references(() => jobs.id, { onDelete: "cascade" }),
    seq: integer("seq").notNull(),
    stream: text("stream").$type<OutputStream>().notNull(),
    data: text("data").notNull(),
    at: ms("at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.seq] })],
);
