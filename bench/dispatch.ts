// Dispatch: `<agent>_run_async`, then `<agent>_done` until it says `listo`, for a worker that does
// nothing (/bin/true), against spawning that same worker directly from Node and waiting for it.
import { McpHttpClient } from "./lib/mcp-http.js";
import { addTrivialAgent, spawnAndWait, startCorral } from "./lib/server.js";
import { percentile, type Benchmark } from "./lib/stats.js";

const WARMUP = 10;
const RUNS = 200;

async function dispatchOnce(client: McpHttpClient, agent: string, workdir: string): Promise<{ ms: number; polls: number }> {
  const t0 = performance.now();
  const id = (await client.callTool(`${agent}_run_async`, { prompt: "nothing", workdir })).text.trim();
  for (let polls = 1; ; polls++) {
    const { text } = await client.callTool(`${agent}_done`, { job_id: id });
    if (text.startsWith("listo")) return { ms: performance.now() - t0, polls };
    if (!text.startsWith("pendiente")) throw new Error(`job ${id}: ${text.split("\n")[0]}`);
  }
}

export const dispatch: Benchmark = {
  name: "dispatch",
  async run() {
    const server = await startCorral();
    try {
      const bin = await addTrivialAgent(server, "bench_true");
      const workdir = `${server.root}/work`;
      const client = await McpHttpClient.connect(`${server.url}/mcp`, server.token);
      for (let i = 0; i < WARMUP; i++) await dispatchOnce(client, "bench_true", workdir);
      const corral: number[] = [];
      let polls = 0;
      for (let i = 0; i < RUNS; i++) {
        const one = await dispatchOnce(client, "bench_true", workdir);
        corral.push(one.ms);
        polls += one.polls;
      }
      await client.close();

      for (let i = 0; i < WARMUP; i++) await spawnAndWait(bin, workdir);
      const direct: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const t0 = performance.now();
        await spawnAndWait(bin, workdir);
        direct.push(performance.now() - t0);
      }
      return {
        title: "Dispatch: `_run_async` → `_done` says `listo` (trivial worker)",
        baseline: `spawning the same worker (\`${bin}\`) from Node and waiting for its exit.`,
        rows: [
          { metric: "p50", corral: percentile(corral, 50), baseline: percentile(direct, 50), unit: "ms" },
          { metric: "p99", corral: percentile(corral, 99), baseline: percentile(direct, 99), unit: "ms" },
        ],
        notes: [
          `${RUNS} sequential jobs over one MCP session, \`_done\` polled back to back (${(polls / RUNS).toFixed(1)} calls per job on average).`,
        ],
      };
    } finally {
      await server.stop();
    }
  },
};
