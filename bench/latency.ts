// `_done` call latency on a finished job, against the cheapest request the same server answers
// (GET /api/health) on the same keep-alive connection pool.
import { McpHttpClient } from "./lib/mcp-http.js";
import { addTrivialAgent, startCorral } from "./lib/server.js";
import { percentile, type Benchmark } from "./lib/stats.js";

const WARMUP = 50;
const CALLS = 1000;

export const latency: Benchmark = {
  name: "latency",
  async run() {
    const server = await startCorral();
    try {
      await addTrivialAgent(server, "bench_true");
      const client = await McpHttpClient.connect(`${server.url}/mcp`, server.token);
      const id = (await client.callTool("bench_true_run_async", { prompt: "nothing", workdir: `${server.root}/work` })).text.trim();
      while (!(await client.callTool("bench_true_done", { job_id: id })).text.startsWith("listo"));

      const timeDone = async () => {
        const t0 = performance.now();
        await client.callTool("bench_true_done", { job_id: id });
        return performance.now() - t0;
      };
      const timeHealth = async () => {
        const t0 = performance.now();
        await (await fetch(`${server.url}/api/health`)).text();
        return performance.now() - t0;
      };
      for (let i = 0; i < WARMUP; i++) await timeDone();
      const done: number[] = [];
      for (let i = 0; i < CALLS; i++) done.push(await timeDone());
      for (let i = 0; i < WARMUP; i++) await timeHealth();
      const health: number[] = [];
      for (let i = 0; i < CALLS; i++) health.push(await timeHealth());
      await client.close();
      return {
        title: "`_done` call latency (finished job)",
        baseline: "`GET /api/health` on the same server, the HTTP round-trip floor.",
        rows: [
          { metric: "p50", corral: percentile(done, 50), baseline: percentile(health, 50), unit: "ms" },
          { metric: "p99", corral: percentile(done, 99), baseline: percentile(health, 99), unit: "ms" },
        ],
        notes: [`${CALLS} sequential calls each, after ${WARMUP} warm-up calls.`],
      };
    } finally {
      await server.stop();
    }
  },
};
