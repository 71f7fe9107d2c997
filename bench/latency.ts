// `_done` call latency on a finished job, against the cheapest request the same server answers
// (GET /api/health) through the same client and keep-alive pool; MCP `ping` and `tools/list` beside
// it show what the protocol itself costs before any tool runs.
import { httpGet, McpHttpClient } from "./lib/mcp-http.js";
import { addTrivialAgent, startCorral } from "./lib/server.js";
import { percentile, type Benchmark } from "./lib/stats.js";

const WARMUP = 1000;
const CALLS = 2000;

/**
 * `CALLS` timings of each way, taken in turns (one of each per round, after `WARMUP` untimed
 * rounds): on a shared machine the load changes over a run, and every way then sees the same
 * load, as in the dispatch bench.
 */
async function interleaved<K extends string>(ways: Record<K, () => Promise<unknown>>): Promise<Record<K, number[]>> {
  const names = Object.keys(ways) as K[];
  const samples = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<K, number[]>;
  for (let round = -WARMUP; round < CALLS; round++) {
    for (const name of names) {
      const t0 = performance.now();
      await ways[name]();
      if (round >= 0) samples[name].push(performance.now() - t0);
    }
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
      const modern = await McpHttpClient.modern(`${server.url}/mcp`, server.token);
      const id = (await client.callTool("bench_true_run_async", { prompt: "nothing", workdir: `${server.root}/work` })).text.trim();
      while (!(await client.callTool("bench_true_done", { job_id: id })).text.startsWith("listo"));

      const { done, modernDone, health, ping } = await interleaved({
        done: () => client.callTool("bench_true_done", { job_id: id }),
        // A 2026-07-28 request is served by a server instance made for it alone, with every tool of the mount.
        modernDone: () => modern.callTool("bench_true_done", { job_id: id }),
        health: () => httpGet(`${server.url}/api/health`),
        ping: () => client.rpc("ping"),
      });
      // Apart: each call allocates far more than the others, and its garbage would fall on them.
      const listed = async (c: McpHttpClient) => {
        const list: number[] = [];
        for (let i = 0; i < 200; i++) {
          const t0 = performance.now();
          await c.rpc("tools/list");
          if (i >= 50) list.push(performance.now() - t0);
        }
        return list;
      };
      const list = await listed(client);
      const modernList = await listed(modern);
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
          { metric: "`_done` p50, 2026-07-28 (no session)", corral: percentile(modernDone, 50), baseline: healthP50, unit: "ms" },
          { metric: "MCP `ping` p50", corral: percentile(ping, 50), baseline: healthP50, unit: "ms" },
          { metric: "`tools/list` p50 (every agent's tools)", corral: percentile(list, 50), baseline: healthP50, unit: "ms" },
          { metric: "`tools/list` p50, 2026-07-28", corral: percentile(modernList, 50), baseline: healthP50, unit: "ms" },
        ],
        notes: [
          `${CALLS} sequential requests of each kind, the kinds taken in turns, after ${WARMUP} warm-up rounds; then 150 \`tools/list\` calls after 50 untimed.`,
        ],
      };
    } finally {
      await server.stop();
    }
  },
};
