import { z } from "zod";
import { AgentNameSchema, ModelSchema } from "./agents.js";
import { CancelSourceSchema, JobOriginSchema, JobStatusSchema, OutputStreamSchema } from "./enums.js";
import { RetryPolicySchema } from "./retry.js";
import { JobWorktreeSchema } from "./worktrees.js";

export const JobIdSchema = z.string().regex(/^[a-z0-9]{6,32}$/, "not a job id");

/**
 * The job fields of the MCP tools (`<agent>_run`, `_run_async`, `corral_run_many`), under pyCorral's
 * snake_case names, which its callers depend on. REST takes the same checks under camelCase names
 * (LaunchJobBodySchema); each door maps its own into the server's one launch request.
 */
export const McpJobInputSchema = z.object({
  prompt: z
    .string()
    .min(1, "the prompt is empty")
    .max(1_000_000)
    // A program's arguments end at a NUL byte: no worker could be given it.
    .refine((p) => !p.includes("\0"), "the prompt holds a NUL byte (\\u0000), which no program can be given; remove it")
    .describe("The task"),
  workdir: z.string().min(1).max(4096).optional(),
  // workdir and model: an agent's own when left out, as every option here.
  model: ModelSchema.optional(),
  timeout_s: z
    .number()
    .int()
    .min(1)
    .max(7 * 24 * 3600)
    .optional()
    .describe("Seconds before it is killed (default: the agent's)"),
  max_cost_usd: z.number().positive().max(1_000_000).optional().describe("Stop it once its cost passes this many USD"),
  max_tokens: z.number().int().positive().optional().describe("Stop it once its input + output tokens pass this"),
  retry: RetryPolicySchema.optional().describe("When to try it again if it fails (default: the agent's)"),
  shared_workdir: z.boolean().optional().describe("Run even if another job uses the workdir"),
  // Short: with the worktrees toolset every launch tool shows both, on every turn.
  worktree: z.boolean().optional().describe("Work in a new git worktree, on branch corral/<job id>"),
  base: z.string().min(1).max(200).optional().describe("The commit the worktree starts from (default HEAD)"),
  session: JobIdSchema.optional().describe("An ended job's id to continue"),
});
export type McpJobInput = z.infer<typeof McpJobInputSchema>;

/** `POST /api/jobs`: the job fields the MCP tools take (under pyCorral's names), in the API's camelCase: the names of the server's launch request. */
export const LaunchJobBodySchema = z
  .object({
    agent: AgentNameSchema,
    prompt: McpJobInputSchema.shape.prompt,
    workdir: McpJobInputSchema.shape.workdir,
    model: McpJobInputSchema.shape.model,
    timeoutS: McpJobInputSchema.shape.timeout_s,
    maxCostUsd: McpJobInputSchema.shape.max_cost_usd,
    maxTokens: McpJobInputSchema.shape.max_tokens,
    retry: McpJobInputSchema.shape.retry,
    sharedWorkdir: McpJobInputSchema.shape.shared_workdir,
    worktree: McpJobInputSchema.shape.worktree,
    base: McpJobInputSchema.shape.base,
    session: McpJobInputSchema.shape.session,
    /** The job this launch runs again (the panel's Relaunch and Edit and relaunch); its page then lists this one. */
    relaunchOf: JobIdSchema.optional(),
  })
  .strict();
export type LaunchJobBody = z.infer<typeof LaunchJobBodySchema>;

/**
 * `POST /api/jobs/many` (and `corral_run_many`): one prompt to several agents, one job each, each in
 * its own workdir unless `sharedWorkdir` asks for one shared.
 */
export const LaunchManyBodySchema = LaunchJobBodySchema.omit({ agent: true, session: true, relaunchOf: true })
  .extend({ agents: z.array(AgentNameSchema).min(1, "name at least one agent").max(32) })
  .strict();
export type LaunchManyBody = z.infer<typeof LaunchManyBodySchema>;

export const UsageSchema = z.object({
  model: z.string().nullable(),
  inputTokens: z.number().int().nullable(),
  outputTokens: z.number().int().nullable(),
  cachedInputTokens: z.number().int().nullable(),
  costUsd: z.number().nullable(),
  costSource: z.enum(["reported", "estimated"]).nullable(),
});
export type Usage = z.infer<typeof UsageSchema>;

export const InvocationSchema = z.object({
  command: z.string(),
  args: z.array(z.string()),
  cwd: z.string(),
});
export type InvocationRecord = z.infer<typeof InvocationSchema>;

export const JobSchema = z.object({
  id: JobIdSchema,
  agent: z.string(),
  status: JobStatusSchema,
  prompt: z.string(),
  workdir: z.string(),
  model: z.string().nullable(),
  timeoutS: z.number().int(),
  origin: JobOriginSchema,
  invocation: InvocationSchema.nullable(),
  pid: z.number().int().nullable(),
  exitCode: z.number().int().nullable(),
  error: z.string().nullable(),
  finalText: z.string().nullable(),
  outputBytes: z.number().int(),
  /** Summed over the job's attempts (GET /api/jobs/:id/attempts has each one's). */
  usage: UsageSchema,
  /** 1 for the first try; more when the retry policy tried again. */
  attempt: z.number().int(),
  retry: RetryPolicySchema.nullable(),
  /** Who bills this job, taken from its agent at launch. */
  provider: z.string().nullable(),
  limits: z.object({ maxCostUsd: z.number().nullable(), maxTokens: z.number().int().nullable() }),
  createdAt: z.number(),
  /** When its first attempt started: a retried job's duration runs from there to `endedAt`. */
  startedAt: z.number().nullable(),
  endedAt: z.number().nullable(),
  /** The first request to cancel the job: when, through which door, and the client that sent it; null when none was made. */
  cancel: z.object({ at: z.number(), by: CancelSourceSchema, client: z.string().nullable() }).nullable(),
  /** When its worker, still running a grace period (CORRAL_KILL_GRACE_MS) after SIGTERM, was sent SIGKILL; null when it never came to that. */
  killedAt: z.number().nullable(),
  /** The id of the conversation's first job (the job's own id when it started the conversation). */
  conversationId: JobIdSchema,
  /** The earlier job of the same agent this one continues; null for a first turn. */
  followUpOf: JobIdSchema.nullable(),
  /** The worker's own session id as its CLI reported it (what a follow-up resumes); null when none was reported. */
  workerSession: z.string().nullable(),
  /** The git worktree the job runs in (`worktree: true`), its branch and base, and whether it is still there; null: it runs in its workdir. */
  worktree: JobWorktreeSchema.nullable(),
  /** The first job of the launch to several agents this job was one of (`GET /api/jobs/:id/group` lists them); null when launched alone. */
  groupId: JobIdSchema.nullable(),
  /** The job this one was relaunched from (`relaunchOf` at launch; `GET /api/jobs/:id/relaunches` lists a job's); null when launched afresh. */
  relaunchOf: JobIdSchema.nullable(),
  /**
   * The runner that holds the job (GET /api/runners): `local`, the server itself, for a job of an
   * agent without a runner label, from its launch; a `corral runner`'s id once one claimed it;
   * null while it waits for a runner with its agent's label.
   */
  runner: z.string().nullable(),
});
export type Job = z.infer<typeof JobSchema>;

/** The jobs one launch to several agents started, in the order the agents were given. */
export const JobGroupSchema = z.object({ jobs: z.array(JobSchema) });
export type JobGroup = z.infer<typeof JobGroupSchema>;

/** `GET /api/jobs/:id/relaunches`: the jobs relaunched from that job, oldest first (the newest 50 when there are more). */
export const JobRelaunchesSchema = z.object({ jobs: z.array(JobSchema) });
export type JobRelaunches = z.infer<typeof JobRelaunchesSchema>;

/** `GET /api/jobs/:id/thread`: the jobs of that job's conversation, oldest first. */
export const JobThreadSchema = z.object({ conversationId: JobIdSchema, jobs: z.array(JobSchema) });
export type JobThread = z.infer<typeof JobThreadSchema>;

const numberFromQuery = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

export const JobListQuerySchema = z
  .object({
    agent: AgentNameSchema.optional(),
    status: z
      .string()
      .transform((s) => s.split(",").filter(Boolean))
      .pipe(z.array(JobStatusSchema))
      .optional(),
    /** Text anywhere in the job's id, prompt or error, case-insensitive. */
    q: z.string().max(500).optional(),
    limit: numberFromQuery(1, 500).default(50),
    offset: numberFromQuery(0, 10_000_000).default(0),
  })
  .strict();
export type JobListQuery = z.infer<typeof JobListQuerySchema>;

export const JobListSchema = z.object({
  /** Newest first: in the order the jobs were added. */
  jobs: z.array(JobSchema),
  total: z.number().int(),
  /** A text search counts at most 1,000 matches past `offset`; true when it stopped there and `total` is a lower bound. */
  totalCapped: z.boolean(),
});
export type JobList = z.infer<typeof JobListSchema>;

export const OutputQuerySchema = z
  .object({
    cursor: numberFromQuery(0, Number.MAX_SAFE_INTEGER).default(0),
    limit: numberFromQuery(1024, 4 * 1024 * 1024).default(256 * 1024),
  })
  .strict();
export type OutputQuery = z.infer<typeof OutputQuerySchema>;

/** One piece of a job's output log; `cursor` is where the next read starts. */
/**
 * One try of a job, with the part of the job's output it wrote (cursors `outputStart`..`outputEnd`),
 * its own error and its own usage: the job's usage is the sum of its attempts'.
 */
export const JobAttemptSchema = z.object({
  attempt: z.number().int(),
  status: JobStatusSchema,
  exitCode: z.number().int().nullable(),
  error: z.string().nullable(),
  startedAt: z.number(),
  endedAt: z.number().nullable(),
  outputStart: z.number().int(),
  outputEnd: z.number().int().nullable(),
  usage: UsageSchema,
});
export type JobAttempt = z.infer<typeof JobAttemptSchema>;

export const JobAttemptListSchema = z.object({ attempts: z.array(JobAttemptSchema) });
export type JobAttemptList = z.infer<typeof JobAttemptListSchema>;

export const OutputChunkSchema = z.object({ stream: OutputStreamSchema, text: z.string() });
export type OutputChunk = z.infer<typeof OutputChunkSchema>;

export const OutputPageSchema = z.object({
  chunks: z.array(OutputChunkSchema),
  cursor: z.number().int(),
  /** True when the job has ended and the page reaches the end of its output. */
  complete: z.boolean(),
});
export type OutputPage = z.infer<typeof OutputPageSchema>;

export const OutputTailQuerySchema = z.object({ chars: numberFromQuery(1, 16_384).default(400) }).strict();
export type OutputTailQuery = z.infer<typeof OutputTailQuerySchema>;

/** The last characters a job printed, and its last line as the Readable view shows it. */
export const OutputTailSchema = z.object({
  text: z.string(),
  /** The latest line read as its agent kind's events (for a JSON-mode CLI, never the raw JSON), on one line. */
  line: z.string(),
});
export type OutputTail = z.infer<typeof OutputTailSchema>;
