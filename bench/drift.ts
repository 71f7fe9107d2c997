// Drift: 10,000 jobs of a worker that does nothing, one after another in one workdir, over REST
// (`POST /api/jobs`) with each end read from the WebSocket job list — no MCP session, so only the
// job's own path is in the figure. The last 1,000 against the first 1,000 of the same run: a
// registry, data dir or map that grows with every job shows as drift.
import { RestJobs } from "./lib/rest-jobs.js";
import { addTrivialAgent, memoryOf, spawnAndWait, startCorral } from "./lib/server.js";
import { percentile, type Benchmark } from "./lib/stats.js";

const JOBS = Number(process.env.BENCH_DRIFT_JOBS ?? 10_000);
const WINDOW = Math.max(1, Math.floor(JOBS / 10));
/** The bar: the last window's p50 at most this much above the first's. */
const MAX_DRIFT = 1.2;
const SPAWN_EVERY = 10;

export const drift: Benchmark = {
  name: "drift",
  async run() {
    const server = await startCorral();
    try {
      const bin = await addTrivialAgent(server, "bench_true");
      const workdir = `${server.root}/work`;
      const rest = await RestJobs.connect(server);
      const samples: number[] = [];
      /** A raw spawn every SPAWN_EVERY jobs: how loaded the machine was in each window. */
      const spawns: { at: number; ms: number }[] = [];
      const rss: number[] = [];
      for (let i = 0; i < JOBS; i++) {
        const t0 = performance.now();
        await rest.run("bench_true", "nothing", workdir);
        samples.push(performance.now() - t0);
        if (i % SPAWN_EVERY === 0) {
          const s0 = performance.now();
          await spawnAndWait(bin, workdir);
          spawns.push({ at: i, ms: performance.now() - s0 });
        }
        if (i === WINDOW - 1 || i === JOBS - 1) rss.push(memoryOf(server.pid).rssMiB);
      }
      rest.close();
      const first = samples.slice(0, WINDOW);
      const last = samples.slice(-WINDOW);
      const first50 = percentile(first, 50);
      const spawnIn = (from: number, to: number) =>
        percentile(
          spawns.filter((s) => s.at >= from && s.at < to).map((s) => s.ms),
          50,
        );
      return {
        title: `Drift: ${JOBS.toLocaleString("en")} sequential jobs`,
        baseline: `the first ${WINDOW.toLocaleString("en")} jobs of the same run.`,
        rows: [
          {
            metric: `p50 of the last ${WINDOW.toLocaleString("en")}`,
            corral: percentile(last, 50),
            baseline: first50,
            unit: "ms",
            target: { bound: "max", value: MAX_DRIFT * first50, rule: `${MAX_DRIFT}× the first ${WINDOW.toLocaleString("en")}` },
          },
          { metric: `p99 of the last ${WINDOW.toLocaleString("en")}`, corral: percentile(last, 99), baseline: percentile(first, 99), unit: "ms" },
          {
            metric: "raw spawn during the last window, p50 (the machine's load; baseline: during the first)",
            corral: spawnIn(JOBS - WINDOW, JOBS),
            baseline: spawnIn(0, WINDOW),
            unit: "ms",
          },
          { metric: "server RSS (baseline: after the first window)", corral: rss[1] ?? Number.NaN, baseline: rss[0] ?? Number.NaN, unit: "MiB" },
        ],
        notes: [
          "Each job: `POST /api/jobs`, then its end from the `subscribe_jobs` WebSocket (REST, not MCP). Job times are launch to end announced, in one workdir; the run takes a few minutes (`BENCH_DRIFT_JOBS` shortens it).",
        ],
      };
    } finally {
      await server.stop();
    }
  },
};
