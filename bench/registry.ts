// The jobs list at 100,000 jobs: every filter the panel's History and `corral_jobs` offer (agent,
// each status, several statuses, text, pages deep into the list), each answer with its total,
// against GET /api/health on the same server. Then what a job's writes cost (insert and three
// updates, through the triggers and indexes the list needs) in a full registry against an empty one.
import path from "node:path";
import Database from "better-sqlite3";
import { RARE_JOBS, RARE_WORD, seedJobs } from "./lib/job-seed.js";
import { startCorral } from "./lib/server.js";
import { percentile, type Benchmark, type BenchRow } from "./lib/stats.js";

const JOBS = 100_000;
const CALLS = 100;
const WARMUP = 10;
const WRITES = 2_000;
const LIST_TARGET = { bound: "max", value: 20, rule: "issue 13: ≤ 20 ms at 100,000 jobs" } as const;
const STATUSES = ["queued", "running", "succeeded", "failed", "cancelled", "timed_out", "budget_exceeded", "lost"];

/**
 * A job's life in the registry as the server writes it, each statement its own transaction: the
 * launch, the start, the usage, the end. Returns the milliseconds each job took.
 */
function jobWrites(file: string, count: number, tag: string): number[] {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("busy_timeout = 5000");
  const insert = db.prepare(
    `insert into jobs (id, agent, status, prompt, workdir, model, timeout_s, origin, provider, created_at)
     values (?, 'gemini', 'queued', ?, '/home/dev/projects/gemini-1', 'gemini-model-1', 1800, 'mcp', 'gemini', ?)`,
  );
  const start = db.prepare("update jobs set status = 'running', started_at = ?, pid = ?, invocation = ? where id = ?");
  const usage = db.prepare("update jobs set input_tokens = ?, output_tokens = ?, cost_usd = ?, output_bytes = ? where id = ?");
  const end = db.prepare("update jobs set status = ?, ended_at = ?, exit_code = ?, error = ?, final_text = ? where id = ?");
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const id = `w${tag}${String(i).padStart(8, "0")}`;
    const t0 = performance.now();
    insert.run(id, `Refactor the session handler in src/app.ts and add tests (write-cost job ${i}).`, Date.now());
    start.run(Date.now(), 4242, JSON.stringify({ command: "gemini", args: ["-p", "…"], cwd: "/home/dev" }), id);
    usage.run(1200, 300, 0.002, 4096, id);
    const failed = i % 8 === 0;
    end.run(failed ? "failed" : "succeeded", Date.now(), failed ? 1 : 0, failed ? "exit code 1: TypeError" : null, failed ? null : "Done.", id);
    samples.push(performance.now() - t0);
  }
  db.close();
  return samples;
}

export const registry: Benchmark = {
  name: "registry",
  async run() {
    const server = await startCorral();
    try {
      const file = path.join(server.root, "data", "corral.db");
      const writesEmpty = jobWrites(file, WRITES, "a");
      const seeded = performance.now();
      seedJobs(file, { jobs: JOBS });
      const seedS = (performance.now() - seeded) / 1000;
      const writesFull = jobWrites(file, WRITES, "b");

      const headers = { authorization: `Bearer ${server.token}` };
      const time = async (url: string) => {
        const samples: number[] = [];
        for (let i = 0; i < CALLS + WARMUP; i++) {
          const t0 = performance.now();
          const res = await fetch(`${server.url}${url}`, { headers });
          await res.text();
          if (!res.ok) throw new Error(`${url} answered ${res.status}`);
          if (i >= WARMUP) samples.push(performance.now() - t0);
        }
        return samples;
      };
      const health = percentile(await time("/api/health"), 50);
      const queries: [string, string][] = [
        ["first page (50 newest)", ""],
        ...STATUSES.map((s): [string, string] => [`status ${s}`, `status=${s}`]),
        ["statuses failed + timed_out", "status=failed,timed_out"],
        ["agent", "agent=kiro"],
        ["agent + status", "agent=kiro&status=failed"],
        ["text, a common word (about 60 % of jobs)", "q=test"],
        [`text, a rare word (${RARE_JOBS} jobs)`, `q=${RARE_WORD}`],
        ["text, inside a word", "q=actor"],
        ["text, a phrase", "q=timed%20out%20after"],
        ["text, no match", "q=qqxyzzy"],
        ["text, 2 characters", "q=ti"],
        ["text, 2 characters in 1.5 % of jobs", "q=js"],
        ["text, 2 characters, no match", "q=zq"],
        ["text, 1 character", "q=e"],
        ["text, 1 character in 3 % of jobs", "q=%24"],
        ["text, 1 character, no match", `q=${encodeURIComponent("ж")}`],
        ["text + agent", "q=test&agent=kiro"],
        ["text + status", "q=test&status=failed"],
        ["text + a status with few jobs", "q=test&status=running"],
        ["page 100 (offset 4,950)", "offset=4950"],
        ["last page (offset 99,950)", "offset=99950"],
        ["status, page 100", "status=succeeded&offset=4950"],
        ["text, page 100", "q=test&offset=4950"],
      ];
      const rows: BenchRow[] = [];
      for (const [label, query] of queries) {
        const corral = percentile(await time(`/api/jobs?limit=50${query ? `&${query}` : ""}`), 50);
        rows.push({ metric: `${label} p50`, corral, baseline: health, unit: "ms", target: LIST_TARGET });
      }
      rows.push({
        metric: "a job's writes (insert + 3 updates) at 100,000 jobs p50",
        corral: percentile(writesFull, 50),
        baseline: percentile(writesEmpty, 50),
        unit: "ms",
      });
      return {
        title: `Jobs list with ${JOBS.toLocaleString("en")} jobs in the registry`,
        baseline: "`GET /api/health` on the same server; for the last row, the same writes in the empty registry.",
        rows,
        notes: [
          `${CALLS} sequential \`GET /api/jobs?limit=50&…\` per row after ${WARMUP} warm-up requests; each answer carries its total (a text search counts up to 1,000 matches past the page).`,
          `Seeded in ${seedS.toFixed(1)} s: ${JOBS.toLocaleString("en")} jobs over six agents and every status, prompts of one to sixty sentences, errors and summaries, written in one transaction through the text index's triggers.`,
          `A job's writes: ${WRITES.toLocaleString("en")} jobs, each insert and update its own transaction as the server writes them, in the empty registry (baseline) and after the seed: what the list's indexes and text index add to every job as the registry grows.`,
        ],
      };
    } finally {
      await server.stop();
    }
  },
};
