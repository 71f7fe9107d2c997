// Burst: 500 jobs of a worker that does nothing, launched over MCP as fast as they are accepted,
// until the last has ended. Throughput against spawning the same 500 workers directly with the
// agent's concurrency, and the server's peak RSS (VmHWM) against its RSS just before.
import { McpHttpClient } from "./lib/mcp-http.js";
import { addTrivialAgent, memoryOf, spawnAndWait, startCorral } from "./lib/server.js";
import type { Benchmark } from "./lib/stats.js";

const JOBS = 500;
/** The agent's maxConcurrent (Corral's default) and the baseline's parallelism. */
const CONCURRENCY = 4;
/** MCP calls in flight while launching. */
const LAUNCHERS = 16;
/** corral_wait takes at most 100 ids. */
const WAIT_BATCH = 100;

async function pool<T>(count: number, width: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) {
        const i = next++;
        out[i] = await task(i);
      }
    }),
  );
  return out;
}

export const burst: Benchmark = {
  name: "burst",
  async run() {
    const server = await startCorral();
    try {
      const bin = await addTrivialAgent(server, "bench_true", CONCURRENCY);
      const workdir = `${server.root}/work`;
      const clients = await Promise.all(Array.from({ length: LAUNCHERS }, () => McpHttpClient.connect(`${server.url}/mcp`, server.token)));
      const before = memoryOf(server.pid);

      const t0 = performance.now();
      let c = 0;
      // Parallel jobs each get their own workdir (Corral refuses two writers in one by default).
      const ids = await pool(JOBS, LAUNCHERS, async (i) => {
        const client = clients[c++ % clients.length]!;
        const res = await client.callTool("bench_true_run_async", { prompt: "nothing", workdir: `${workdir}/${i}` });
        if (res.isError) throw new Error(res.text);
        return res.text.trim();
      });
      const launchedMs = performance.now() - t0;
      for (let i = 0; i < ids.length; i += WAIT_BATCH) {
        const res = await clients[0]!.callTool("corral_wait", { job_ids: ids.slice(i, i + WAIT_BATCH), timeout_s: 600 });
        const failed = res.text.split("\n").filter((line) => line.includes("error:"));
        if (!res.text.startsWith("all ") || failed.length > 0) throw new Error(`burst did not finish cleanly:\n${res.text.slice(0, 2000)}`);
      }
      const corralS = (performance.now() - t0) / 1000;
      const after = memoryOf(server.pid);
      await Promise.all(clients.map((cl) => cl.close()));

      const b0 = performance.now();
      await pool(JOBS, CONCURRENCY, () => spawnAndWait(bin, workdir));
      const directS = (performance.now() - b0) / 1000;

      return {
        title: `Burst: ${JOBS} jobs`,
        baseline: `throughput: spawning the same ${JOBS} workers directly, ${CONCURRENCY} at a time; memory: the server's RSS just before the burst.`,
        rows: [
          { metric: "jobs per second (launch to last ended)", corral: JOBS / corralS, baseline: JOBS / directS, unit: "jobs/s" },
          { metric: "server peak RSS (VmHWM)", corral: after.peakMiB, baseline: before.rssMiB, unit: "MiB" },
        ],
        notes: [
          `Agent \`maxConcurrent\` ${CONCURRENCY}; ${LAUNCHERS} MCP sessions launching; each job in its own new workdir; all ${JOBS} accepted in ${(launchedMs / 1000).toFixed(2)} s; completion read with \`corral_wait\`.`,
        ],
      };
    } finally {
      await server.stop();
    }
  },
};
