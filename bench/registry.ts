// The jobs page at 10,000 jobs: how long the panel's list queries (first page, a text filter, a
// status filter, a deep page) take once the registry is full, against GET /api/health.
import path from "node:path";
import Database from "better-sqlite3";
import { startCorral } from "./lib/server.js";
import { percentile, type Benchmark } from "./lib/stats.js";

const JOBS = 10_000;
const CALLS = 200;

/** Writes finished jobs straight into the running server's registry (SQLite in WAL mode allows it). */
function seed(dataDir: string): void {
  const db = new Database(path.join(dataDir, "corral.db"));
  db.pragma("busy_timeout = 5000");
  const insert = db.prepare(
    `insert into jobs (id, agent, status, prompt, workdir, model, timeout_s, origin, created_at, started_at, ended_at, exit_code, provider)
     values (?, ?, ?, ?, ?, ?, 1800, 'mcp', ?, ?, ?, ?, ?)`,
  );
  const agents = ["gemini", "opencode", "claude", "codex", "kiro"];
  const now = Date.now();
  db.transaction(() => {
    for (let i = 0; i < JOBS; i++) {
      const agent = agents[i % agents.length] as string;
      const failed = i % 7 === 0;
      const created = now - (JOBS - i) * 60_000;
      insert.run(
        `b${String(i).padStart(11, "0")}`,
        agent,
        failed ? "failed" : "succeeded",
        `task ${i}: refactor module ${i % 97} and write tests${i % 500 === 0 ? " needle" : ""}`,
        `/tmp/work/${agent}`,
        null,
        created,
        created + 1000,
        created + 30_000,
        failed ? 1 : 0,
        agent,
      );
    }
  })();
  db.close();
}

export const registry: Benchmark = {
  name: "registry",
  async run() {
    const server = await startCorral();
    try {
      seed(path.join(server.root, "data"));
      const headers = { authorization: `Bearer ${server.token}` };
      const time = async (url: string) => {
        const samples: number[] = [];
        for (let i = 0; i < CALLS + 20; i++) {
          const t0 = performance.now();
          const res = await fetch(`${server.url}${url}`, { headers });
          await res.text();
          if (!res.ok) throw new Error(`${url} answered ${res.status}`);
          if (i >= 20) samples.push(performance.now() - t0);
        }
        return samples;
      };
      const health = await time("/api/health");
      const queries: [string, string][] = [
        ["first page (50 newest)", "/api/jobs?limit=50"],
        ["text filter", "/api/jobs?limit=50&q=needle"],
        ["agent + status filter", "/api/jobs?limit=50&agent=claude&status=failed"],
        ["page 100 (offset 5000)", "/api/jobs?limit=50&offset=5000"],
      ];
      const rows = [];
      for (const [label, url] of queries) {
        rows.push({ metric: `${label} p50`, corral: percentile(await time(url), 50), baseline: percentile(health, 50), unit: "ms" as const });
      }
      return {
        title: `Jobs list with ${JOBS.toLocaleString("en")} jobs in the registry`,
        baseline: "`GET /api/health` on the same server.",
        rows,
        notes: [`${CALLS} sequential requests per query after 20 warm-up requests; each answer includes the total count.`],
      };
    } finally {
      await server.stop();
    }
  },
};
