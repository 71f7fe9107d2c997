import { index, integer, real, sqliteTable, text } from "drizzle-orm/sqlite-core";
import type { AgentKind, InvocationRecord, JobOrigin, JobStatus } from "@corral/shared";

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
    createdAt: integer("created_at").notNull(),
    startedAt: integer("started_at"),
    endedAt: integer("ended_at"),
  },
  (t) => [
    index("jobs_created_idx").on(t.createdAt),
    index("jobs_agent_created_idx").on(t.agent, t.createdAt),
    index("jobs_status_idx").on(t.status),
  ],
);

export type AgentRow = typeof agents.$inferSelect;
export type JobRow = typeof jobs.$inferSelect;
