// The registry as every module sees it, whichever database holds it: each repository's methods,
// their parameters and the rows they answer, and the registry's transactions. repos/*.ts implement
// the repositories once, over a Dialect (dialect.ts); sqlite-registry.ts and pg/registry.ts open
// them on each database. The rows are the schema's (both schema files infer the same ones:
// schema-rows.test.ts).
import type { AuditListQuery, CostGroupKey, JobFileCounts, JobListQuery, JobStatus, JobWorktree } from "@corral/shared";
import type {
  AgentRow,
  AuditRow,
  BrowserSessionRow,
  BudgetRow,
  HubAgentRow,
  HubMessageRow,
  JobAttemptRow,
  JobFileRow,
  JobMessageRow,
  JobOutputRow,
  JobRow,
  McpTaskRow,
  OllamaModelRow,
  PriceOverrideRow,
  RunnerRequestRow,
  RunnerRow,
  agents,
  auditLog,
  budgets,
  hubMessages,
  jobAttempts,
  jobFileChanges,
  jobs,
} from "./schema.js";

export type NewAgentRow = typeof agents.$inferInsert;

export interface AgentsRepo {
  /** Every agent, by name (bytewise). */
  list(): Promise<AgentRow[]>;
  get(name: string): Promise<AgentRow | undefined>;
  insert(row: NewAgentRow): Promise<AgentRow>;
  /** Adds the rows that are not there yet; keeps what users changed. */
  insertMissing(rows: NewAgentRow[]): Promise<void>;
  update(name: string, patch: Partial<NewAgentRow>): Promise<AgentRow | undefined>;
  delete(name: string): Promise<boolean>;
}

export type NewJobRow = typeof jobs.$inferInsert;
/** A job's fields a write may change; `seq` is the registry's to number, and is never written. */
export type JobPatch = Partial<Omit<NewJobRow, "id" | "agent" | "createdAt">>;
export type NewJobAttemptRow = typeof jobAttempts.$inferInsert;
export type JobAttemptPatch = Omit<Partial<NewJobAttemptRow>, "jobId" | "attempt">;

/** A text search stops counting this many matches past the page's offset (`totalCapped`). */
export const SEARCH_COUNT_CAP = 1000;

export interface JobListPage {
  rows: JobRow[];
  total: number;
  /** True when `total` is where a text search stopped counting: there are more matches. */
  totalCapped: boolean;
}

export interface JobsRepo {
  insert(row: NewJobRow): Promise<JobRow>;
  get(id: string): Promise<JobRow | undefined>;
  update(id: string, patch: JobPatch): Promise<JobRow | undefined>;
  /**
   * The patch, only while runner `runner` holds the job and it is not `lost`: a runner declared
   * lost (silent past its lease) can no longer write over that. Undefined when the write was refused.
   */
  updateClaimed(id: string, runner: string, patch: JobPatch): Promise<JobRow | undefined>;
  /** The jobs list: newest first (by seq), filtered by agent, statuses and text, a page at a time. */
  list(query: JobListQuery): Promise<JobListPage>;
  /** The newest `limit` jobs of a conversation, oldest first. */
  thread(conversationId: string, limit: number): Promise<JobRow[]>;
  /** The jobs of one launch to several agents, in the order they were launched. */
  group(groupId: string): Promise<JobRow[]>;
  /** The newest `limit` jobs relaunched from job `id` (Relaunch, Edit and relaunch), oldest first. */
  relaunches(id: string, limit: number): Promise<JobRow[]>;
  /** A queued or running job in this workdir, if any: the oldest queued one, else the oldest running one. */
  activeInWorkdir(workdir: string): Promise<JobRow | undefined>;
  startAttempt(row: NewJobAttemptRow): Promise<void>;
  endAttempt(jobId: string, attempt: number, patch: JobAttemptPatch): Promise<void>;
  attempts(jobId: string): Promise<JobAttemptRow[]>;
  hasJobs(agent: string): Promise<boolean>;
  /** Jobs in these statuses, the oldest first. */
  withStatus(statuses: JobStatus[]): Promise<JobRow[]>;
  /** Jobs whose worktree is in this state, the oldest first. */
  withWorktree(state: JobWorktree["state"]): Promise<JobRow[]>;
}

export type NewJobFileRow = typeof jobFileChanges.$inferInsert;

export interface JobFilesRepo {
  /** Stores the latest change of each path, all or none; a path listed twice gets its last. */
  upsert(rows: NewJobFileRow[]): Promise<void>;
  remove(jobId: string, paths: string[]): Promise<void>;
  /** A job's changed files, by path (bytewise). */
  list(jobId: string): Promise<JobFileRow[]>;
  /** Records that the job's file list stops at `limit` files (more changed). */
  markCut(jobId: string, limit: number, at: number): Promise<void>;
  /** Where the job's file list was cut (see markCut), or null when it holds every change. */
  cutAt(jobId: string): Promise<number | null>;
  /** Created / modified / deleted counts for each of the jobs (jobs with no files are absent). */
  counts(jobIds: string[]): Promise<Map<string, JobFileCounts>>;
  /** Every workdir a job has used, with how many jobs used it and when the newest of them was added. */
  jobWorkdirs(): Promise<{ workdir: string; jobs: number; lastJobAt: number }[]>;
  /**
   * Every workdir (or only those of `workdirs`) with the runner of each group of its jobs (null:
   * still waiting for one) and the place of the group's newest job (its seq): the newest job says
   * on which machine the files are.
   */
  workdirRunners(workdirs?: string[]): Promise<{ workdir: string; runner: string | null; jobs: number; newest: number }[]>;
}

/** A stored message, as in-process workers keep it (agents/types.ts ConversationStore). */
export type StoredMessage = Omit<JobMessageRow, "jobId" | "seq">;

/** In-process workers' conversations, message by message (the ConversationStore of agents/types.ts). */
export interface JobMessagesRepo {
  /** The messages of the job and of those it followed up, one array per job, oldest first, at most `maxTurns` jobs back. */
  turns(jobId: string, maxTurns: number): Promise<StoredMessage[][]>;
  append(jobId: string, seq: number, message: StoredMessage): Promise<void>;
  restart(jobId: string): Promise<void>;
  began(jobId: string): Promise<boolean>;
}

/** Aggregates over the jobs table for /metrics. */
export interface JobStatsRepo {
  countByStatus(): Promise<Partial<Record<JobStatus, number>>>;
}

export type NewBudgetRow = typeof budgets.$inferInsert;
export type BudgetPatch = Partial<Pick<NewBudgetRow, "maxCostUsd" | "maxTokens" | "updatedAt">>;

/** Sums over jobs, as the cost report and budgets show them. */
export interface CostSums {
  jobs: number;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  costUsd: number | null;
  reportedUsd: number;
  estimatedUsd: number;
  pricedJobs: number;
  unpricedJobs: number;
  unpricedInputTokens: number;
  unpricedOutputTokens: number;
  noUsageJobs: number;
}

export interface CostFilter {
  from: number;
  to: number;
  provider?: string;
  agent?: string;
}

export type PricedJobFields = Pick<
  JobRow,
  "id" | "agent" | "provider" | "model" | "usageModel" | "inputTokens" | "outputTokens" | "cachedInputTokens" | "costUsd" | "costSource" | "attempt"
>;

export interface CostChange {
  id: string;
  costUsd: number | null;
  costSource: "reported" | "estimated" | null;
}

export interface CostsRepo {
  overrides(): Promise<PriceOverrideRow[]>;
  upsertOverride(row: PriceOverrideRow): Promise<PriceOverrideRow>;
  deleteOverride(provider: string, model: string): Promise<boolean>;
  budgets(provider?: string): Promise<BudgetRow[]>;
  budget(id: number): Promise<BudgetRow | undefined>;
  findBudget(provider: string, period: "day" | "month"): Promise<BudgetRow | undefined>;
  insertBudget(row: NewBudgetRow): Promise<BudgetRow>;
  updateBudget(id: number, patch: BudgetPatch): Promise<BudgetRow | undefined>;
  deleteBudget(id: number): Promise<boolean>;
  /** Totals over the filter, grouped by the given keys (none: one row), ordered by the keys (nulls first). */
  aggregate(filter: CostFilter, groupBy: CostGroupKey[]): Promise<Array<CostSums & Partial<Record<CostGroupKey, string | null>>>>;
  /** Jobs whose cost is not the CLI's own and may change with prices, in the order they were added. */
  repriceable(): Promise<PricedJobFields[]>;
  /** Every change, all or none; a job listed twice gets its last. */
  setCosts(changes: CostChange[]): Promise<void>;
}

export type NewAuditRow = Omit<typeof auditLog.$inferInsert, "id">;

export interface AuditRepo {
  insert(row: NewAuditRow): Promise<AuditRow>;
  list(query: AuditListQuery): Promise<{ rows: AuditRow[]; total: number }>;
}

export interface SessionsRepo {
  insert(row: BrowserSessionRow): Promise<void>;
  /** The live session with this secret hash, if any. */
  findLive(secretHash: string, now: number): Promise<BrowserSessionRow | undefined>;
  touch(id: string, lastSeenAt: number, expiresAt: number): Promise<void>;
  listLive(now: number): Promise<BrowserSessionRow[]>;
  remove(id: string): Promise<boolean>;
  removeAll(): Promise<number>;
  removeExpired(now: number): Promise<number>;
}

export interface OllamaModelsRepo {
  /** The models known on one Ollama server, by name (bytewise). */
  forServer(baseUrl: string): Promise<OllamaModelRow[]>;
  /** One listing's facts, all or none; a model listed twice keeps its last facts. */
  saveFacts(baseUrl: string, listing: Array<{ model: string; facts: Record<string, unknown> }>, checkedAt: number): Promise<void>;
  saveProbe(baseUrl: string, model: string, probe: { outcome: string; detail: string; checkedAt: number }): Promise<void>;
}

/** Where a page of a session's tasks starts: after this task, newest first. */
export interface TaskPageStart {
  createdAt: number;
  id: string;
}

export interface McpTasksRepo {
  insert(row: McpTaskRow): Promise<void>;
  get(id: string): Promise<McpTaskRow | undefined>;
  /** The task is listed by this session from now on. */
  moveToSession(id: string, sessionId: string): Promise<void>;
  /** Marks it cancelled unless it already is; the first cancel is the one kept. */
  cancel(id: string, at: number): Promise<void>;
  /** A session's tasks, newest first, `limit` of them after `after`. */
  page(sessionId: string, after: TaskPageStart | null, limit: number): Promise<McpTaskRow[]>;
  /** Deletes the tasks past their time to live whose job has ended; a job still going keeps its task. */
  removeExpired(now: number): Promise<number>;
}

export type NewHubMessage = Omit<typeof hubMessages.$inferInsert, "id">;

export interface HubSessionCounts {
  name: string;
  agents: number;
  /** Its registrations live now (lease not run out). */
  online: number;
  messages: number;
  lastMessageAt: number | null;
}

/** Conversation sessions: who registered under which name, and the messages between them. */
export interface ConversationsRepo {
  /** A name (re)joins its session: the row takes the new registration's label, times, handle hash and lease. */
  register(row: Omit<HubAgentRow, "endedAt">): Promise<void>;
  /** The registration with this handle hash ends (left, replaced): which it was, undefined when none lives. */
  end(handleHash: string, at: number): Promise<Pick<HubAgentRow, "session" | "name"> | undefined>;
  /**
   * A sign of the client with the handle (a call, or its open stream): the registration with this
   * hash whose handle lives (not ended, seen after `unusedSince`), seen at `at` and online until
   * `presentUntil`; undefined when none does (never given, ended, taken over, or unused too long).
   */
  touch(handleHash: string, at: number, presentUntil: number, unusedSince: number): Promise<HubAgentRow | undefined>;
  /** The same for several handles at once (the presence timer's one write for every open stream). */
  renew(handleHashes: string[], at: number, presentUntil: number): Promise<void>;
  /** A live target's registration offline at `at` (its client's stream closed); whether it was online. */
  lapseLive(handleHash: string, at: number): Promise<boolean>;
  /** Ends the registrations whose handle went unused since `unusedSince` (and any without a handle, from before handles), returning them. */
  expire(at: number, unusedSince: number): Promise<Pick<HubAgentRow, "session" | "name">[]>;
  /** Registrations whose presence ran out after `since` and by `at`: they went offline meanwhile. */
  lapsed(since: number, at: number): Promise<Pick<HubAgentRow, "session" | "name">[]>;
  /** Registrations whose handle lives (online or not), over every session. */
  liveCount(): Promise<number>;
  agent(session: string, name: string): Promise<HubAgentRow | undefined>;
  agents(session: string): Promise<HubAgentRow[]>;
  agentCount(session: string): Promise<number>;
  /** Forgets the session's longest-gone agent that has nothing waiting for it; false when there is none. */
  forgetOldestIdle(session: string): Promise<boolean>;
  insertMessage(row: NewHubMessage): Promise<HubMessageRow>;
  /** Messages waiting for `to`, oldest first. */
  inbox(session: string, to: string, limit: number): Promise<HubMessageRow[]>;
  inboxCount(session: string, to: string): Promise<number>;
  markReceived(ids: number[], at: number): Promise<void>;
  /** The session's messages after `cursor`, oldest first; with `agent`, those from or to it. */
  read(session: string, agent: string | undefined, cursor: number, limit: number): Promise<HubMessageRow[]>;
  /** The last job `from` started with `to` in the session (what the next message continues). */
  lastJob(session: string, from: string, to: string): Promise<string | null>;
  /** Messages to workers whose answers are not stored yet. */
  pendingAnswers(): Promise<HubMessageRow[]>;
  settleAnswer(id: number): Promise<void>;
  /** Every session with its registered names (`online`: live at `at`) and message counts: those with agents first, then the others, each by name. */
  sessions(at: number): Promise<HubSessionCounts[]>;
}

/**
 * The runners that announced themselves: `local`, the server, and the `corral runner` processes
 * (they need PostgreSQL; with SQLite `local` is the only one).
 */
/** What a runner's claim took (runners.claim), and what it left. */
export interface Claim {
  job: JobRow | undefined;
  /** Another claim now may take a job: one waits whose agent had room as counted. */
  more: boolean;
  /** Jobs for these labels still wait, whether or not one could be taken now. */
  waiting: boolean;
  /**
   * With a job: how many of its agent's jobs the claiming runner may run at once as the claim
   * counted them (its limit less the jobs every other runner and the server hold), as the
   * runner's own limit read (JobEngine.limitHere) would say at the claim.
   */
  roomHere?: number;
}

export interface RunnersRepo {
  /** A runner announcing itself as it starts; its id is new to every start. */
  register(row: RunnerRow): Promise<void>;
  /** The server's own runner (`local`) at each start: one row, kept, brought up to date. */
  registerLocal(row: RunnerRow): Promise<void>;
  /** Its sign of life; false when no such runner is registered. */
  heartbeat(id: string, at: number): Promise<boolean>;
  /** Every runner, the first started first. */
  list(): Promise<RunnerRow[]>;
  get(id: string): Promise<RunnerRow | undefined>;
  /**
   * Runner `runner` takes the oldest queued job no runner has claimed whose agent asks for one of
   * `labels`, if that agent is under its maxConcurrent counting every runner's jobs (running, or
   * claimed and about to start) and the server's: the job's `runner` is set, its status left
   * queued for the runner to start, and the server told (JOB_CHANNEL, when the transaction
   * commits). With what is left: whether a claim now could take another, and whether any job
   * still waits (behind an agent's limit or another runner's claim): a runner then claims again
   * when one of its jobs ends, and otherwise waits to be told of a new one.
   */
  claim(runner: string, labels: string[]): Promise<Claim>;
  /**
   * Gives back the jobs runner `runner` claimed but never started (it is stopping): another runner
   * may take them, and the runners of their labels are told. With `agent` (the server's, that agent
   * given a runner label): its jobs that never started, while it has a label — a job waiting out a
   * retry finishes its attempts where it ran.
   */
  releaseQueued(runner: string, agent?: string): Promise<JobRow[]>;
  /**
   * Runner `runner` (the server's, `local`) takes the queued jobs no runner claimed of `agent`,
   * which lost its runner label, or without `agent` of every agent without a label (found at
   * start), oldest first. A job a runner claims at the same moment is that runner's.
   */
  takeQueued(runner: string, agent?: string): Promise<JobRow[]>;
  /**
   * How many of `agent`'s jobs runners other than `runner` hold (claimed, running, or waiting out a
   * retry): with the ones `runner` runs, they count against the agent's maxConcurrent.
   */
  heldElsewhere(agent: string, runner: string): Promise<number>;
  /** Tells the runners with one of `labels` that a job waits for them (when the transaction commits), so they claim it at once. */
  announceQueued(labels: string[]): Promise<void>;
  /** Tells the runner holding job `jobId` that it was asked to stop (when the transaction commits). */
  askToStop(jobId: string): Promise<void>;
  /** It said it was stopping; the first time it said so is kept. */
  markStopped(id: string, at: number): Promise<boolean>;
}

/**
 * The most bytes of output a page holds besides its first chunk, where a dialect cuts pages by
 * size (PostgreSQL, whose rows a runner's login writes); a page that reaches it may not be the last.
 */
export const OUTPUT_PAGE_BYTES = 16 * 1024 * 1024;

/** Runners' job output on its way to the server (see the job_output table). */
export interface JobOutputRepo {
  /** Appends chunks; a (job, seq) already there is refused. */
  append(rows: JobOutputRow[]): Promise<void>;
  /** A job's chunks after `seq`, in order, at most `limit` (and OUTPUT_PAGE_BYTES past the first). */
  after(jobId: string, seq: number, limit: number): Promise<JobOutputRow[]>;
}

/** What a runner stores to answer a request: the answer or the error, as JSON. */
export interface RunnerAnswer {
  answeredAt: number;
  answer: string | null;
  error: string | null;
}

/** Browsing requests for workdirs on runners' machines (see the runner_requests table). */
export interface RunnerRequestsRepo {
  /** Stores a request for its runner, and tells the runners (corral_request). */
  ask(row: Omit<RunnerRequestRow, "answeredAt" | "answer" | "error">): Promise<void>;
  get(id: string): Promise<RunnerRequestRow | undefined>;
  /** The requests for runner `runner` not answered yet, oldest first. */
  pending(runner: string): Promise<RunnerRequestRow[]>;
  /** Stores the answer of request `id` if it is still there and unanswered, and tells the server (corral_answer); false when it was answered already or given up on. */
  answer(id: string, answer: RunnerAnswer): Promise<boolean>;
  /** Forgets a request whose answer was read (or that was given up on). */
  remove(id: string): Promise<void>;
  /** Forgets every request asked before `before` (answered or not): nobody waits for them any more. */
  sweep(before: number): Promise<number>;
}

export interface Repos {
  agents: AgentsRepo;
  jobs: JobsRepo;
  jobFiles: JobFilesRepo;
  jobMessages: JobMessagesRepo;
  jobStats: JobStatsRepo;
  costs: CostsRepo;
  audit: AuditRepo;
  sessions: SessionsRepo;
  ollamaModels: OllamaModelsRepo;
  mcpTasks: McpTasksRepo;
  conversations: ConversationsRepo;
  runners: RunnersRepo;
  jobOutput: JobOutputRepo;
  runnerRequests: RunnerRequestsRepo;
}

/** The registry, whichever database holds it. */
export interface Registry extends Repos {
  /**
   * Runs `fn` in one transaction: all of its writes are stored, or none (it rolls back when `fn`
   * throws). Only calls through `tx` belong to it; a call through the registry itself is never
   * part of it (with SQLite it waits until the transaction has ended, so `fn` must not wait for one).
   */
  transaction<T>(fn: (tx: Repos) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  readonly dialect: "sqlite" | "postgres";
  /** PostgreSQL: what a call that gave up waiting for a lock (55P03) says, naming who holds it. */
  describeLockWait?(): Promise<string>;
}
