// `pnpm registry:copy` on 100,000 jobs: the built command (dist/registry-copy.js, what a user
// runs) copying a seeded SQLite registry into an empty PostgreSQL one, against the same jobs bulk
// loaded straight into another empty database (one unnest insert per 2,000 jobs, no drizzle).
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { openDb } from "../apps/server/src/db/client.js";
import { openPgDb } from "../apps/server/src/db/pg/client.js";
import { startPrivatePostgres } from "../apps/server/test/private-postgres.js";
import { SEED_AGENTS, seedJobs, seedPgJobs } from "./lib/job-seed.js";
import { freshBenchDir } from "./lib/server.js";
import type { Benchmark } from "./lib/stats.js";

const JOBS = 100_000;
const builtCopy = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../apps/server/dist/registry-copy.js");

const AGENT_ROW = `insert into agents (name, kind, provider, workdir, timeout_s, max_concurrent, env, enabled, builtin, created_at, updated_at)
  values ($1, 'command', $1, '/home/dev', 1800, 4, '{}', true, false, $2, $2)`;

async function privatePostgres(): Promise<{ url: string; stop: () => Promise<void> }> {
  const postgres = await startPrivatePostgres();
  if ("missing" in postgres) throw new Error(postgres.missing);
  return postgres;
}

/** Runs the built command to its end; the milliseconds it took from spawn. */
function timedCopy(env: Record<string, string>): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, [builtCopy], { env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) =>
    child.once("exit", (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`registry:copy exited ${code}: ${stderr}`)))),
  );
}

export const registryCopy: Benchmark = {
  name: "registry-copy",
  async run() {
    const root = freshBenchDir("registry-copy-");
    try {
      const dataDir = path.join(root, "data");
      const file = path.join(dataDir, "corral.db");
      const sqlite = openDb(file);
      const now = Date.now();
      const agent = sqlite.db.$client.prepare(AGENT_ROW.replace(/\$1/g, "@name").replace("$2, $2", "@now, @now").replace("true, false", "1, 0"));
      for (const name of SEED_AGENTS) agent.run({ name, now });
      sqlite.close();
      seedJobs(file, { jobs: JOBS });

      // Each into a private PostgreSQL of its own, empty: the copy's target, then the baseline's.
      const target = await privatePostgres();
      let copyMs: number;
      try {
        copyMs = await timedCopy({ CORRAL_DATA_DIR: dataDir, CORRAL_DATABASE_URL: target.url });
      } finally {
        await target.stop();
      }

      const loaded = await privatePostgres();
      const { db, close } = await openPgDb(loaded.url);
      let loadMs: number;
      try {
        const started = performance.now();
        for (const name of SEED_AGENTS) await db.$client.query(AGENT_ROW, [name, now]);
        await seedPgJobs(db.$client, { jobs: JOBS });
        loadMs = performance.now() - started;
      } finally {
        await close();
        await loaded.stop();
      }
      return {
        title: `pnpm registry:copy with ${JOBS.toLocaleString("en")} jobs`,
        baseline: "The same jobs bulk loaded into an empty PostgreSQL registry (one unnest insert per 2,000 jobs).",
        rows: [
          { metric: `copy of ${JOBS.toLocaleString("en")} jobs, from spawn to exit`, corral: copyMs / 1000, baseline: loadMs / 1000, unit: "s" },
        ],
        notes: [
          "The built command (dist/registry-copy.js) as a user runs it: it opens and checks the SQLite file, migrates the empty target, copies every table in one transaction and sets the sequences.",
          "A private PostgreSQL 15 (the test run's: fsync off); the SQLite registry holds the seeded jobs of the registry benchmark.",
        ],
      };
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  },
};
