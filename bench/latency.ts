// `_done` call latency on a finished job, against the cheapest request the same server answers
// (GET /api/health) through the same client and keep-alive pool; MCP `ping` and `tools/list` beside
// it show what the protocol itself costs before any tool runs.
import { httpGet, McpHttpClient } from "./lib/mcp-http.js";
import { addTrivialAgent, startCorral } from "./lib/server.js";
import { percentile, type Benchmark } from "./lib/stats.js";

const WARMUP = 200;
const CALLS = 1000;

/** `CALLS` timings of `fn`, after `WARMUP` untimed calls. */
async function timed(fn: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const t0 = performance.now();
    await fn();
    samples.push(performance.now() - t0);
  }
  return samples;
}

export const latency: Benchmark = {
  name: "latency",
  async run() {
    const server = await startCorral();
    try {
      await addTrivialAgent(server, "bench_true");
      const client = await McpHttpClient.connect(`${server.url}/mcp`, server.token);
      const id = (await client.callTool("bench_true_run_async", { prompt: "nothing", workdir: `${server.root}/work` })).text.trim();
      while (!(await client.callTool("bench_true_done", { job_id: id })).text.startsWith("listo"));

      // Interleaved in rounds, so a burst of load on the machine falls on all of them alike.
      const done: number[] = [];
      const health: number[] = [];
      const ping: number[] = [];
      const list: number[] = [];
      for (let round = 0; round < 2; round++) {
        done.push(...(await timed(() => client.callTool("bench_true_done", { job_id: id }))));
        health.push(...(await timed(() => httpGet(`${server.url}/api/health`))));
        ping.push(...(await timed(() => client.rpc("ping"))));
        list.push(...(await timed(() => client.rpc("tools/list"))));
      }
      await client.close();
      const healthP50 = percentile(health, 50);
      return {
        title: "`_done` call latency (finished job)",
        baseline: "`GET /api/health` on the same server through the same client and keep-alive pool, the HTTP round-trip floor.",
        rows: [
          {
            metric: "`_done` p50",
            corral: percentile(done, 50),
            baseline: healthP50,
            unit: "ms",
            target: { bound: "max", value: 1.3 * healthP50, rule: "1.3× baseline" },
          },
          { metric: "`_done` p99", corral: percentile(done, 99), baseline: percentile(health, 99), unit: "ms" },
          { metric: "MCP `ping` p50", corral: percentile(ping, 50), baseline: healthP50, unit: "ms" },
          { metric: "`tools/list` p50 (every agent's tools)", corral: percentile(list, 50), baseline: healthP50, unit: "ms" },
        ],
        notes: [`${2 * CALLS} sequential requests of each kind in two interleaved rounds, each after ${WARMUP} warm-up requests.`],
      };
    } finally {
      await server.stop();
    }
  },
};
