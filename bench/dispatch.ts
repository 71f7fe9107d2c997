// Dispatch: one job at a time of a worker that does nothing (/bin/true), three ways — over MCP as
// `<agent>_run_async` then `<agent>_done` until it says `listo`, over MCP as one `<agent>_run`, and
// over REST with the end announced on the WebSocket (a job's own cost, no MCP call in it) —
// against spawning that same worker directly from Node and waiting for it, and the HTTP round
// trip of `GET /api/health` on the same server.
import { McpHttpClient } from "./lib/mcp-http.js";
import { RestJobs } from "./lib/rest-jobs.js";
import { addTrivialAgent, spawnAndWait, startCorral, type RunningServer } from "./lib/server.js";
import { percentile, type Benchmark } from "./lib/stats.js";

// A fresh server runs its first few hundred jobs about twice as slowly (its code not yet
// optimised; the drift bench's first window shows it): the figures are the steady state.
const WARMUP = 400;
const RUNS = Number(process.env.BENCH_DISPATCH_RUNS ?? 200);
/** What the issue allows a job beyond its spawn and its round trips. */
const SLACK_MS = 1.5;

async function dispatchOnce(client: McpHttpClient, agent: string, workdir: string): Promise<{ ms: number; polls: number }> {
  const t0 = performance.now();
  const id = (await client.callTool(`${agent}_run_async`, { prompt: "nothing", workdir })).text.trim();
  for (let polls = 1; ; polls++) {
    const { text } = await client.callTool(`${agent}_done`, { job_id: id });
    if (text.startsWith("listo")) return { ms: performance.now() - t0, polls };
    if (!text.startsWith("pendiente")) throw new Error(`job ${id}: ${text.split("\n")[0]}`);
  }
}

async function runOnce(client: McpHttpClient, agent: string, workdir: string): Promise<number> {
  const t0 = performance.now();
  const { text } = await client.callTool(`${agent}_run`, { prompt: "nothing", workdir });
  if (!text.startsWith("ok")) throw new Error(`_run: ${text.split("\n")[0]}`);
  return performance.now() - t0;
}

/**
 * Timings of each way, taken in turns (one of each per round, after WARMUP rounds): on a shared
 * machine the load changes over a run, and every way then sees the same load.
 */
async function interleaved<K extends string>(rounds: number, ways: Record<K, () => Promise<number>>): Promise<Record<K, number[]>> {
  const names = Object.keys(ways) as K[];
  const samples = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<K, number[]>;
  for (let round = -WARMUP; round < rounds; round++) {
    for (const name of names) {
      const ms = await ways[name]();
      if (round >= 0) samples[name].push(ms);
    }
  }
  return samples;
}

async function healthRoundTrip(server: RunningServer): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${server.url}/api/health`);
  await res.text();
  if (!res.ok) throw new Error(`/api/health answered ${res.status}`);
  return performance.now() - t0;
}

export const dispatch: Benchmark = {
  name: "dispatch",
  async run() {
    const server = await startCorral();
    try {
      const bin = await addTrivialAgent(server, "bench_true");
      const workdir = `${server.root}/work`;
      const client = await McpHttpClient.connect(`${server.url}/mcp`, server.token);
      const rest = await RestJobs.connect(server);
      let polls = 0;
      const serverSide: number[] = [];
      const { async, sync, own, health, direct } = await interleaved(RUNS, {
        async: async () => {
          const one = await dispatchOnce(client, "bench_true", workdir);
          polls += one.polls;
          return one.ms;
        },
        sync: () => runOnce(client, "bench_true", workdir),
        own: async () => {
          const t0 = performance.now();
          const job = await rest.run("bench_true", "nothing", workdir);
          if (job.endedAt !== null) serverSide.push(job.endedAt - job.createdAt);
          return performance.now() - t0;
        },
        health: () => healthRoundTrip(server),
        direct: async () => {
          const t0 = performance.now();
          await spawnAndWait(bin, workdir);
          return performance.now() - t0;
        },
      });
      rest.close();
      await client.close();

      const spawn50 = percentile(direct, 50);
      const rt50 = percentile(health, 50);
      const floor = (roundTrips: number) => ({
        bound: "max" as const,
        value: spawn50 + roundTrips * rt50 + SLACK_MS,
        rule: `spawn + ${roundTrips === 1 ? "one" : "two"} \`/api/health\` round trip${roundTrips === 1 ? "" : "s"} + ${SLACK_MS} ms`,
      });
      return {
        title: "Dispatch: one job at a time (trivial worker)",
        baseline: `spawning the same worker (\`${bin}\`) from Node and waiting for its exit; \`GET /api/health\` p50 ${rt50.toFixed(2)} ms on the same server.`,
        rows: [
          { metric: "`_run_async` → `_done` says `listo`, p50", corral: percentile(async, 50), baseline: spawn50, unit: "ms", target: floor(2) },
          { metric: "`_run_async` → `_done` says `listo`, p99", corral: percentile(async, 99), baseline: percentile(direct, 99), unit: "ms" },
          { metric: "`_run`, p50", corral: percentile(sync, 50), baseline: spawn50, unit: "ms", target: floor(1) },
          { metric: "`_run`, p99", corral: percentile(sync, 99), baseline: percentile(direct, 99), unit: "ms" },
          { metric: "REST launch → end on the WebSocket, p50", corral: percentile(own, 50), baseline: spawn50, unit: "ms" },
        ],
        notes: [
          `${RUNS} sequential jobs each way, the ways taken in turns, after ${WARMUP} warm-up rounds, in one workdir; \`_done\` polled back to back (${(polls / (RUNS + WARMUP)).toFixed(1)} calls per job on average).`,
          `The REST row is a job's own cost without MCP: one \`POST /api/jobs\`, its end read from the \`subscribe_jobs\` WebSocket; the server's own clock says ${percentile(serverSide, 50)} ms (p50, whole ms) from the launch stored to the end stored.`,
        ],
      };
    } finally {
      await server.stop();
    }
  },
};
