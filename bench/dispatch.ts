// Dispatch: one job at a time of a worker that does nothing (/bin/true), three ways — over MCP as
// `<agent>_run_async` then `<agent>_done` until it says `listo`, over MCP as one `<agent>_run`, and
// over REST with the end announced on the WebSocket (a job's own cost, no MCP call in it) —
// against spawning that same worker directly from Node and waiting for it, and the HTTP round
// trip of `GET /api/health` on the same server. Then the same for an agent of the built-in kind
// `gemini` running bench/fixtures/gemini (a /bin/sh Gemini CLI: its flags, its `-o stream-json`
// events, a session, a file written), the path users run: `_done` polled every 5 ms as a client
// does, against spawning the same script with the same arguments from this process, and an MCP
// `ping` as the round trip.
import { mkdirSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { McpHttpClient } from "./lib/mcp-http.js";
import { RestJobs } from "./lib/rest-jobs.js";
import { addGeminiAgent, addTrivialAgent, GEMINI_PROMPT, spawnAndWait, startCorral, type RunningServer } from "./lib/server.js";
import { percentile, type Benchmark } from "./lib/stats.js";

// A fresh server runs its first few hundred jobs about twice as slowly (its code not yet
// optimised; the drift bench's first window shows it): the figures are the steady state.
const WARMUP = 400;
const RUNS = Number(process.env.BENCH_DISPATCH_RUNS ?? 200);
/** What the issue allows a job beyond its spawn and its round trips. */
const SLACK_MS = 1.5;
/** Issue 32: a client polls `_done` every 5 ms (the first poll as soon as `_run_async` answered). */
const POLL_MS = 5;

async function dispatchOnce(
  client: McpHttpClient,
  agent: string,
  workdir: string,
  prompt = "nothing",
  pollMs = 0,
): Promise<{ ms: number; polls: number }> {
  const t0 = performance.now();
  const id = (await client.callTool(`${agent}_run_async`, { prompt, workdir })).text.trim();
  for (let polls = 1; ; polls++) {
    const { text } = await client.callTool(`${agent}_done`, { job_id: id });
    if (text.startsWith("listo")) return { ms: performance.now() - t0, polls };
    if (!text.startsWith("pendiente")) throw new Error(`job ${id}: ${text.split("\n")[0]}`);
    if (pollMs > 0) await sleep(pollMs);
  }
}

async function runOnce(client: McpHttpClient, agent: string, workdir: string, prompt = "nothing"): Promise<number> {
  const t0 = performance.now();
  const { text } = await client.callTool(`${agent}_run`, { prompt, workdir });
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
      const gemini = await addGeminiAgent(server, "bench_gemini");
      const workdir = `${server.root}/work`;
      // The gemini jobs write a file: a workdir of their own, which the direct spawns share.
      const geminiWorkdir = `${server.root}/gemini-work`;
      mkdirSync(geminiWorkdir, { recursive: true });
      const client = await McpHttpClient.connect(`${server.url}/mcp`, server.token);
      const rest = await RestJobs.connect(server);
      let polls = 0;
      let geminiPolls = 0;
      const serverSide: number[] = [];
      const geminiServerSide: number[] = [];
      const { async, sync, own, health, direct, gAsync, gSync, gOwn, ping, gDirect } = await interleaved(RUNS, {
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
        gAsync: async () => {
          const one = await dispatchOnce(client, "bench_gemini", geminiWorkdir, GEMINI_PROMPT, POLL_MS);
          geminiPolls += one.polls;
          return one.ms;
        },
        gSync: () => runOnce(client, "bench_gemini", geminiWorkdir, GEMINI_PROMPT),
        gOwn: async () => {
          const t0 = performance.now();
          const job = await rest.run("bench_gemini", GEMINI_PROMPT, geminiWorkdir);
          if (job.status !== "succeeded") throw new Error(`gemini job ${job.id}: ${job.status} ${job.error ?? ""}`);
          if (job.endedAt !== null) geminiServerSide.push(job.endedAt - job.createdAt);
          return performance.now() - t0;
        },
        ping: async () => {
          const t0 = performance.now();
          await client.rpc("ping");
          return performance.now() - t0;
        },
        gDirect: async () => {
          const t0 = performance.now();
          await spawnAndWait(gemini.command, geminiWorkdir, gemini.args, gemini.env);
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
      const gSpawn50 = percentile(gDirect, 50);
      const ping50 = percentile(ping, 50);
      const geminiFloor = (roundTrips: number) => ({
        bound: "max" as const,
        value: gSpawn50 + roundTrips * ping50 + SLACK_MS,
        rule: `spawn of the script + ${roundTrips === 1 ? "one" : "two"} MCP \`ping\`${roundTrips === 1 ? "" : "s"} + ${SLACK_MS} ms`,
      });
      return {
        title: "Dispatch: one job at a time (trivial worker; built-in gemini agent on a /bin/sh CLI)",
        baseline: `spawning the same worker (\`${bin}\`; for gemini, \`bench/fixtures/gemini\` with the arguments Corral passes, in the same workdir) from Node and waiting for its exit; \`GET /api/health\` p50 ${rt50.toFixed(2)} ms, MCP \`ping\` p50 ${ping50.toFixed(2)} ms on the same server and client.`,
        rows: [
          { metric: "`_run_async` → `_done` says `listo`, p50", corral: percentile(async, 50), baseline: spawn50, unit: "ms", target: floor(2) },
          { metric: "`_run_async` → `_done` says `listo`, p99", corral: percentile(async, 99), baseline: percentile(direct, 99), unit: "ms" },
          { metric: "`_run`, p50", corral: percentile(sync, 50), baseline: spawn50, unit: "ms", target: floor(1) },
          { metric: "`_run`, p99", corral: percentile(sync, 99), baseline: percentile(direct, 99), unit: "ms" },
          { metric: "REST launch → end on the WebSocket, p50", corral: percentile(own, 50), baseline: spawn50, unit: "ms" },
          {
            metric: `gemini agent: \`_run_async\` → \`_done\` polled every ${POLL_MS} ms says \`listo\`, p50`,
            corral: percentile(gAsync, 50),
            baseline: gSpawn50,
            unit: "ms",
            target: geminiFloor(2),
          },
          { metric: "gemini agent: `_run_async` → `_done`, p99", corral: percentile(gAsync, 99), baseline: percentile(gDirect, 99), unit: "ms" },
          { metric: "gemini agent: `_run`, p50", corral: percentile(gSync, 50), baseline: gSpawn50, unit: "ms", target: geminiFloor(1) },
          { metric: "gemini agent: `_run`, p99", corral: percentile(gSync, 99), baseline: percentile(gDirect, 99), unit: "ms" },
          { metric: "gemini agent: REST launch → end on the WebSocket, p50", corral: percentile(gOwn, 50), baseline: gSpawn50, unit: "ms" },
          { metric: "MCP `ping` (the gemini rows' round trip), p50", corral: ping50, baseline: rt50, unit: "ms" },
        ],
        notes: [
          `${RUNS} sequential jobs each way, the ways taken in turns, after ${WARMUP} warm-up rounds, in one workdir; \`_done\` polled back to back (${(polls / (RUNS + WARMUP)).toFixed(1)} calls per job on average).`,
          `gemini: \`_done\` asked at once, then every ${POLL_MS} ms while \`pendiente\` (${(geminiPolls / (RUNS + WARMUP)).toFixed(2)} calls per job on average); the server's own clock says ${percentile(geminiServerSide, 50)} ms (p50, whole ms) from the launch stored to the end stored.`,
          `The REST row is a job's own cost without MCP: one \`POST /api/jobs\`, its end read from the \`subscribe_jobs\` WebSocket; the server's own clock says ${percentile(serverSide, 50)} ms (p50, whole ms) from the launch stored to the end stored.`,
        ],
      };
    } finally {
      await server.stop();
    }
  },
};
