// A registry full of jobs that look like real ones: several agents in uneven shares, every
// status, prompts, errors and summaries of varied length built from a working vocabulary, so a
// text search meets common words, rare words and word fragments as it would in use. Deterministic
// (a seeded generator), written straight into the database in one transaction.
import Database from "better-sqlite3";

/** Words the seeded text never contains except where placed: a rare search term and its jobs. */
export const RARE_WORD = "zanzibar";
export const RARE_JOBS = 7;

/** mulberry32: small, fast, and the same jobs on every run. */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const AGENTS: [string, number][] = [
  ["gemini", 0.34],
  ["claude", 0.24],
  ["opencode", 0.16],
  ["codex", 0.14],
  ["kiro", 0.08],
  ["qwen", 0.04],
];

type JobStatus = "queued" | "running" | "succeeded" | "failed" | "cancelled" | "timed_out" | "budget_exceeded" | "lost";

const FINAL_STATUSES: [JobStatus, number][] = [
  ["succeeded", 0.74],
  ["failed", 0.12],
  ["cancelled", 0.05],
  ["timed_out", 0.04],
  ["budget_exceeded", 0.03],
  ["lost", 0.02],
];

const VERBS = ["Refactor", "Fix", "Add", "Document", "Rename", "Review", "Speed up", "Migrate", "Simplify", "Test", "Port", "Split"];
const THINGS = [
  "the session handler",
  "the billing module",
  "the CSV importer",
  "the retry loop",
  "the websocket reconnect logic",
  "the login form",
  "the cache layer",
  "the PDF exporter",
  "the rate limiter",
  "the search index",
  "the settings page",
  "the upload endpoint",
  "the cron scheduler",
  "the email templates",
  "the GraphQL resolvers",
  "the payment webhook",
];
const FILES = [
  "src/app.ts",
  "lib/db.py",
  "cmd/main.go",
  "src/router.rs",
  "web/index.tsx",
  "api/users.rb",
  "pkg/queue/worker.go",
  "tests/test_api.py",
];
const TAILS = [
  "Keep the public API unchanged and add unit tests for the edge cases.",
  "Write the summary to output.md when you are done.",
  "Do not touch the migrations; run the linter before finishing.",
  "Explain every change in a short comment and update the README.",
  "Use the existing helpers rather than adding new dependencies.",
  "Make sure the integration tests still pass on CI.",
  "Measure before and after, and report the numbers.",
  "The bug shows up only under load; add a regression test that reproduces it.",
];
const ERRORS = [
  "exit code 1: TypeError: Cannot read properties of undefined (reading 'map')",
  "exit code 2: error: unrecognized argument --yolo",
  "exit code 1: 429 Too Many Requests: quota exceeded for model",
  "exit code 137: killed (out of memory?)",
  "exit code 1: ENOENT: no such file or directory, open 'package.json'",
  "exit code 1: AssertionError: expected 3 to equal 4",
  "exit code 1: panic: runtime error: index out of range [5] with length 5",
  "exit code 1: ModuleNotFoundError: No module named 'requests'",
];
const SUMMARIES = [
  "Moved the parsing into its own function and covered it with tests.",
  "The handler now returns early on empty input; added two regression tests.",
  "Replaced the hand-written loop with the existing batch helper.",
  "Documented the configuration options and fixed two typos in the README.",
  "Profiled the hot path: most of the time went to JSON serialisation, now cached.",
  "Renamed the module and updated every import; the linter is clean.",
  "Could not reproduce the failure locally; added logging around the retry.",
];

function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)] as T;
}

function weighted<T>(rand: () => number, items: readonly [T, number][]): T {
  let r = rand();
  for (const [item, weight] of items) {
    r -= weight;
    if (r < 0) return item;
  }
  return items[items.length - 1]![0];
}

function prompt(rand: () => number, i: number): string {
  const parts = [`${pick(rand, VERBS)} ${pick(rand, THINGS)} in ${pick(rand, FILES)}.`];
  // Most prompts are a few sentences; some carry pasted context and run to kilobytes.
  const sentences = rand() < 0.05 ? 20 + Math.floor(rand() * 40) : 1 + Math.floor(rand() * 5);
  for (let s = 0; s < sentences; s++)
    parts.push(rand() < 0.5 ? pick(rand, TAILS) : `${pick(rand, VERBS)} ${pick(rand, THINGS)} next (ticket #${Math.floor(rand() * 9000) + 1000}).`);
  return parts.join(" ") + (i % 997 === 0 ? " See the notes in /home/dev/notes.md" : "");
}

export interface SeedOptions {
  jobs: number;
  /** Newest jobs left queued and running, as on a busy server. */
  queued?: number;
  running?: number;
  now?: number;
}

/** One seeded job, in the registry's column names. */
export interface SeedJob {
  id: string;
  agent: string;
  status: JobStatus;
  prompt: string;
  workdir: string;
  model: string;
  origin: string;
  invocation: string | null;
  pid: number | null;
  exitCode: number | null;
  error: string | null;
  finalText: string | null;
  outputBytes: number;
  inputTokens: number | null;
  outputTokens: number | null;
  costUsd: number | null;
  costSource: string | null;
  createdAt: number;
  startedAt: number | null;
  endedAt: number | null;
}

/** The seeded jobs, oldest first: the same ones on every run, whichever registry they go to. */
export function* seededJobs(options: SeedOptions): Generator<SeedJob> {
  const { jobs, queued = 10, running = 4, now = Date.now() } = options;
  const rand = generator(13);
  const rareAt = new Set(Array.from({ length: RARE_JOBS }, (_, k) => Math.floor(((k + 0.5) * jobs) / RARE_JOBS)));
  const seen = new Set<string>();
  for (let i = 0; i < jobs; i++) {
    let id: string;
    do
      id = Math.floor(rand() * 2 ** 48)
        .toString(16)
        .padStart(12, "0");
    while (seen.has(id));
    seen.add(id);
    const agent = weighted(rand, AGENTS);
    const fromEnd = jobs - i;
    const status: JobStatus = fromEnd <= queued ? "queued" : fromEnd <= queued + running ? "running" : weighted(rand, FINAL_STATUSES);
    // About a year of history, a few minutes apart, newest last.
    const createdAt = now - fromEnd * 300_000 + Math.floor(rand() * 1000);
    const started = status === "queued" ? null : createdAt + Math.floor(rand() * 2000);
    const ended = status === "queued" || status === "running" ? null : (started ?? createdAt) + Math.floor(rand() * 600_000);
    const text = prompt(rand, i) + (rareAt.has(i) ? ` Check the ${RARE_WORD} fixtures too.` : "");
    const workdir = `/home/dev/projects/${agent}-${i % 40}`;
    const model = `${agent}-model-${1 + (i % 3)}`;
    const finalText = status === "succeeded" ? `${pick(rand, SUMMARIES)} ${pick(rand, SUMMARIES)}` : null;
    const error =
      status === "failed"
        ? pick(rand, ERRORS)
        : status === "timed_out"
          ? "timed out after 1800 s"
          : status === "cancelled"
            ? "cancelled"
            : status === "budget_exceeded"
              ? "budget exceeded: $2.00 spent, the limit is $2.00"
              : status === "lost"
                ? "the server stopped while the job ran; its worker was gone at start-up"
                : null;
    const tokens = status === "queued" ? null : Math.floor(rand() * 200_000);
    yield {
      id,
      agent,
      status,
      prompt: text,
      workdir,
      model,
      origin: rand() < 0.8 ? "mcp" : rand() < 0.5 ? "rest" : "panel",
      invocation: status === "queued" ? null : JSON.stringify({ command: agent, args: ["-p", text.slice(0, 200)], cwd: workdir }),
      pid: status === "running" ? 100_000 + i : null,
      exitCode: status === "succeeded" ? 0 : status === "failed" ? 1 : null,
      error,
      finalText,
      outputBytes: status === "queued" ? 0 : Math.floor(rand() * 400_000),
      inputTokens: tokens,
      outputTokens: tokens === null ? null : Math.floor(tokens / 8),
      costUsd: tokens === null ? null : tokens / 1_000_000,
      costSource: tokens === null ? null : "estimated",
      createdAt,
      startedAt: started,
      endedAt: ended,
    };
  }
}

/** The agents the seeded jobs belong to. */
export const SEED_AGENTS = AGENTS.map(([name]) => name);

/**
 * Appends `jobs` jobs to the registry at `file` (already migrated, e.g. by a running server: WAL
 * lets this connection write beside it). Returns the ids, oldest first.
 */
export function seedJobs(file: string, options: SeedOptions): string[] {
  const db = new Database(file);
  db.pragma("busy_timeout = 5000");
  const insert = db.prepare(
    `insert into jobs (id, agent, status, prompt, workdir, model, timeout_s, origin, invocation, pid, exit_code, error, final_text,
       output_bytes, usage_model, input_tokens, output_tokens, cost_usd, cost_source, provider, attempt, created_at, started_at, ended_at)
     values (@id, @agent, @status, @prompt, @workdir, @model, 1800, @origin, @invocation, @pid, @exitCode, @error, @finalText,
       @outputBytes, @model, @inputTokens, @outputTokens, @costUsd, @costSource, @agent, 1, @createdAt, @startedAt, @endedAt)`,
  );
  const ids: string[] = [];
  db.transaction(() => {
    for (const job of seededJobs(options)) {
      ids.push(job.id);
      insert.run(job);
    }
  })();
  db.close();
  return ids;
}

/** A batch of rows per statement: one array per column, unnested. */
const PG_BATCH = 2_000;

/**
 * Appends the seeded jobs to a PostgreSQL registry (migrated, its agents present), in batches.
 * `runnerOf` names the runner each job went to (a runner's id, `local`, or null while it waits);
 * without it jobs have none, as the SQLite seed's.
 */
export async function seedPgJobs(
  pool: { query(text: string, values: unknown[]): Promise<unknown> },
  options: SeedOptions,
  runnerOf?: (job: SeedJob) => string | null,
): Promise<void> {
  const columns: [keyof SeedJob | ((job: SeedJob) => unknown), string, string][] = [
    ["id", "id", "text"],
    ["agent", "agent", "text"],
    ["status", "status", "text"],
    ["prompt", "prompt", "text"],
    ["workdir", "workdir", "text"],
    ["model", "model", "text"],
    ["origin", "origin", "text"],
    ["invocation", "invocation", "jsonb"],
    ["pid", "pid", "int"],
    ["exitCode", "exit_code", "int"],
    ["error", "error", "text"],
    ["finalText", "final_text", "text"],
    ["outputBytes", "output_bytes", "int8"],
    ["inputTokens", "input_tokens", "int8"],
    ["outputTokens", "output_tokens", "int8"],
    ["costUsd", "cost_usd", "float8"],
    ["costSource", "cost_source", "text"],
    ["createdAt", "created_at", "int8"],
    ["startedAt", "started_at", "int8"],
    ["endedAt", "ended_at", "int8"],
    ...(runnerOf ? [[runnerOf, "runner", "text"] as (typeof columns)[number]] : []),
  ];
  const statement = `insert into jobs (${columns.map(([, c]) => c).join(", ")}, timeout_s, usage_model, provider, attempt)
    select t.*, 1800, t.model, t.agent, 1 from unnest(${columns.map(([, , type], k) => `$${k + 1}::${type}[]`).join(", ")})
      as t(${columns.map(([, c]) => c).join(", ")})`;
  let batch: SeedJob[] = [];
  const flush = async () => {
    await pool.query(
      statement,
      columns.map(([key]) => batch.map((job) => (typeof key === "function" ? key(job) : job[key]))),
    );
    batch = [];
  };
  for (const job of seededJobs(options)) {
    batch.push(job);
    if (batch.length === PG_BATCH) await flush();
  }
  if (batch.length) await flush();
}
