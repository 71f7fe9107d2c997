// Burst: 500 jobs of a worker that does nothing, launched over MCP as fast as they are accepted,
// until the last has ended — once with the agent's `maxConcurrent` at 100, once at the default 4.
// Throughput against spawning the same 500 workers directly with the same concurrency; the CPU
// a job costs (the server's and its workers', from /proc, which a loaded machine does not skew as
// it skews throughput) against the same for the direct spawns; the server's peak RSS (VmHWM)
// against its RSS just before. Then the same bursts of an agent of the built-in kind `gemini`
// running bench/fixtures/gemini (a /bin/sh Gemini CLI: its flags, `-o stream-json` events, a
// session, a file written in each job's workdir), against spawning that same script with the same
// arguments, as many at a time, from this process.
import { mkdirSync } from "node:fs";
import { McpHttpClient } from "./lib/mcp-http.js";
import { addGeminiAgent, addTrivialAgent, cpuOf, GEMINI_PROMPT, memoryOf, spawnAndWait, startCorral, treeCpuOf } from "./lib/server.js";
import type { Benchmark, BenchRow } from "./lib/stats.js";

const JOBS = Number(process.env.BENCH_BURST_JOBS ?? 500);
const WARMUP_BURSTS = 2;
/** The agents' maxConcurrent (100, and Corral's default 4) and the baseline's parallelism. */
const CONCURRENCIES = [100, 4];
/** MCP calls in flight while launching. */
const LAUNCHERS = 16;
/** corral_wait takes at most 100 ids. */
const WAIT_BATCH = 100;
/** The bar: at least half the throughput of spawning the workers directly. */
const SHARE = 0.5;

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

/** Seconds from the first launch to the last end, and how long accepting all of them took. */
async function burstOf(clients: McpHttpClient[], agent: string, workdir: string, prompt = "nothing"): Promise<{ s: number; launchedS: number }> {
  const t0 = performance.now();
  let c = 0;
  // Parallel jobs each get their own workdir (Corral refuses two writers in one by default).
  const ids = await pool(JOBS, LAUNCHERS, async (i) => {
    const client = clients[c++ % clients.length]!;
    const res = await client.callTool(`${agent}_run_async`, { prompt, workdir: `${workdir}/${i}` });
    if (res.isError) throw new Error(res.text);
    return res.text.trim();
  });
  const launchedS = (performance.now() - t0) / 1000;
  for (let i = 0; i < ids.length; i += WAIT_BATCH) {
    const res = await clients[0]!.callTool("corral_wait", { job_ids: ids.slice(i, i + WAIT_BATCH), timeout_s: 600 });
    const failed = res.text.split("\n").filter((line) => line.includes("error:"));
    if (!res.text.startsWith("all ") || failed.length > 0) throw new Error(`burst did not finish cleanly:\n${res.text.slice(0, 2000)}`);
  }
  return { s: (performance.now() - t0) / 1000, launchedS };
}

export const burst: Benchmark = {
  name: "burst",
  async run() {
    const server = await startCorral();
    try {
      const clients = await Promise.all(Array.from({ length: LAUNCHERS }, () => McpHttpClient.connect(`${server.url}/mcp`, server.token)));
      // A burst first, unmeasured: a fresh server runs its first few hundred jobs about twice as
      // slowly (its code not yet optimised, as the drift bench's first window shows).
      await addTrivialAgent(server, "bench_true_warmup", 16);
      for (let i = 0; i < WARMUP_BURSTS; i++) await burstOf(clients, "bench_true_warmup", `${server.root}/work/warmup`);
      await addGeminiAgent(server, "bench_gemini_warmup", 16);
      await burstOf(clients, "bench_gemini_warmup", `${server.root}/work/gemini-warmup`, GEMINI_PROMPT);
      const before = memoryOf(server.pid);
      const rows: BenchRow[] = [];
      const perJob = (a: { ownMs: number; childrenMs: number }, b: typeof a) => (b.ownMs - a.ownMs + b.childrenMs - a.childrenMs) / JOBS;
      const notes: string[] = [];
      for (const width of CONCURRENCIES) {
        const agent = `bench_true_${width}`;
        const bin = await addTrivialAgent(server, agent, width);
        const c0 = treeCpuOf(server.pid);
        const corral = await burstOf(clients, agent, `${server.root}/work/${width}`);
        const c1 = treeCpuOf(server.pid);
        const d0 = cpuOf("self");
        const b0 = performance.now();
        await pool(JOBS, width, () => spawnAndWait(bin, `${server.root}/work`));
        const directRate = JOBS / ((performance.now() - b0) / 1000);
        const d1 = cpuOf("self");
        rows.push({
          metric: `jobs per second, \`maxConcurrent\` ${width} (launch to last ended)`,
          corral: JOBS / corral.s,
          baseline: directRate,
          unit: "jobs/s",
          target: { bound: "min", value: SHARE * directRate, rule: `${SHARE}× spawning directly, ${width} at a time` },
        });
        rows.push({
          metric: `CPU per job, \`maxConcurrent\` ${width} (the server and its workers)`,
          corral: perJob(c0, c1),
          baseline: perJob(d0, d1),
          unit: "ms",
        });
        notes.push(`\`maxConcurrent\` ${width}: all ${JOBS} accepted in ${corral.launchedS.toFixed(2)} s.`);
      }
      for (const width of CONCURRENCIES) {
        const agent = `bench_gemini_${width}`;
        const gemini = await addGeminiAgent(server, agent, width);
        const c0 = treeCpuOf(server.pid);
        const corral = await burstOf(clients, agent, `${server.root}/work/gemini-${width}`, GEMINI_PROMPT);
        const c1 = treeCpuOf(server.pid);
        // Each direct run in a directory of its own too, made beforehand (the script writes a file there).
        const dirs = Array.from({ length: JOBS }, (_, i) => `${server.root}/direct/gemini-${width}/${i}`);
        for (const dir of dirs) mkdirSync(dir, { recursive: true });
        const d0 = cpuOf("self");
        const b0 = performance.now();
        await pool(JOBS, width, (i) => spawnAndWait(gemini.command, dirs[i]!, gemini.args, gemini.env));
        const directRate = JOBS / ((performance.now() - b0) / 1000);
        const d1 = cpuOf("self");
        rows.push({
          metric: `gemini agent: jobs per second, \`maxConcurrent\` ${width}`,
          corral: JOBS / corral.s,
          baseline: directRate,
          unit: "jobs/s",
          target: { bound: "min", value: SHARE * directRate, rule: `${SHARE}× spawning the script directly, ${width} at a time` },
        });
        rows.push({ metric: `gemini agent: CPU per job, \`maxConcurrent\` ${width}`, corral: perJob(c0, c1), baseline: perJob(d0, d1), unit: "ms" });
        notes.push(`gemini \`maxConcurrent\` ${width}: all ${JOBS} accepted in ${corral.launchedS.toFixed(2)} s.`);
      }
      const after = memoryOf(server.pid);
      await Promise.all(clients.map((cl) => cl.close()));
      rows.push({ metric: "server peak RSS (VmHWM)", corral: after.peakMiB, baseline: before.rssMiB, unit: "MiB" });
      return {
        title: `Burst: ${JOBS} jobs (trivial worker; built-in gemini agent on a /bin/sh CLI)`,
        baseline: `throughput: spawning the same ${JOBS} workers (\`/usr/bin/true\`; for gemini, \`bench/fixtures/gemini\` with Corral's arguments, each in a directory of its own) directly, as many at a time as the agent allows; CPU: the same, for the bench process and its workers; memory: the server's RSS just before the bursts.`,
        rows,
        notes: [
          `${LAUNCHERS} MCP sessions launching, after ${WARMUP_BURSTS} unmeasured bursts; each job in its own new workdir; completion read with \`corral_wait\`. ${notes.join(" ")}`,
        ],
      };
    } finally {
      await server.stop();
    }
  },
};
