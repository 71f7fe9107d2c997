// Runners: the same trivial jobs (/bin/true) launched over REST, their ends read from the
// WebSocket, run two ways — by `corral runner` processes on a registry in PostgreSQL (the job
// claimed through NOTIFY corral_queue, its changes told back through NOTIFY corral_job) and, as the
// baseline, by a server on its SQLite registry running them itself. Sequential dispatch with one
// runner; a burst with one and with four runners, and the CPU a job of it costs. Targets: one
// runner's job at most twice the CPU of SQLite's, and four runners no slower than one.
import { readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { openPgDb } from "../apps/server/src/db/pg/client.js";
import { startPrivatePostgres } from "../apps/server/test/private-postgres.js";
import { RestJobs } from "./lib/rest-jobs.js";
import { startRunner, type RunningRunner } from "./lib/runner.js";
import { addTrivialAgent, startCorral, treeCpuOf, type RunningServer } from "./lib/server.js";
import { percentile, type Benchmark, type BenchRow } from "./lib/stats.js";

const RUNS = Number(process.env.BENCH_RUNNERS_RUNS ?? 200);
const WARMUP = 200;
/** Unmeasured bursts on SQLite before the measured ones. */
const WARMUP_BURSTS = 2;
const JOBS = Number(process.env.BENCH_RUNNERS_BURST ?? 500);
/** Unmeasured bursts on all four runners before theirs: shared four ways, each added runner runs about as many jobs as the first ran before its burst. */
const FOUR_WARMUP_BURSTS = Math.ceil((4 * (WARMUP + RUNS)) / JOBS);
/** The agents' maxConcurrent: every runner together, or the server, runs at most this many at once. */
const CONCURRENT = 16;
/** REST launches in flight during a burst. */
const LAUNCHERS = 16;
const LABEL = "bench";
/**
 * PostgreSQL's statistics reach pg_stat_database once each backend flushes them: at least a second
 * apart while busy, and within 10 s of going idle (PGSTAT_IDLE_INTERVAL).
 */
const STATS_SETTLE_MS = 11_000;
/** A job on one runner costs at most this many times the CPU of the same job on SQLite (issue 32). */
const CPU_SHARE = 2;
const cpus = os.cpus().length;

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

/** The pid of the PostgreSQL listening on `port` (its postmaster, whose children are the backends), from /proc. */
function postmasterOf(port: string): number {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      if (args[0]?.endsWith("/postgres") && args[args.indexOf("-p") + 1] === port) return Number(entry);
    } catch {
      // Gone meanwhile.
    }
  }
  throw new Error(`no PostgreSQL process listens on port ${port}`);
}

/** CPU used so far, in ms, by the processes `pids` and their children (workers, PostgreSQL backends). */
function cpuMs(pids: number[]): number {
  return pids.reduce((sum, pid) => {
    const cpu = treeCpuOf(pid);
    return sum + cpu.ownMs + cpu.childrenMs;
  }, 0);
}

/** One server and what reaches it: its REST/WebSocket client, its agent, where its jobs' workdirs go. */
interface Side {
  server: RunningServer;
  rest: RestJobs;
  agent: string;
  work: string;
}

/** Seconds from the first launch of `JOBS` jobs, each in a new workdir, to the last end heard. */
async function burstOf(side: Side, tag: string): Promise<number> {
  const t0 = performance.now();
  const ids = await pool(JOBS, LAUNCHERS, (i) => side.rest.launch(side.agent, "nothing", `${side.work}/bursts/${tag}/${i}`));
  await Promise.all(ids.map((id) => side.rest.end(id)));
  return (performance.now() - t0) / 1000;
}

async function sequential(side: Side, samples: number[] | null): Promise<void> {
  const t0 = performance.now();
  // Beside the bursts' workdirs, not above them: a job's start walks its workdir (the snapshot its file changes are told against).
  await side.rest.run(side.agent, "nothing", `${side.work}/sequential`);
  samples?.push(performance.now() - t0);
}

export const runners: Benchmark = {
  name: "runners",
  async run() {
    const postgres = await startPrivatePostgres();
    if ("missing" in postgres) throw new Error(postgres.missing);
    const servers: RunningServer[] = [];
    const started: RunningRunner[] = [];
    try {
      const local = await startCorral();
      servers.push(local);
      const remote = await startCorral({ CORRAL_DATABASE_URL: postgres.url });
      servers.push(remote);
      await addTrivialAgent(local, "bench_true", CONCURRENT);
      await addTrivialAgent(remote, "bench_true", CONCURRENT, LABEL);
      // No label: the PostgreSQL server runs it itself (its runner \`local\`), for what PostgreSQL alone costs a job.
      await addTrivialAgent(remote, "bench_local", CONCURRENT);
      const sqlite: Side = { server: local, rest: await RestJobs.connect(local), agent: "bench_true", work: `${local.root}/work` };
      const pg: Side = { server: remote, rest: await RestJobs.connect(remote), agent: "bench_true", work: `${remote.root}/work` };
      const pgLocal: Side = { ...pg, agent: "bench_local", work: `${remote.root}/work-local` };
      const dataDirs = ["a", "b", "c", "d"].map((name) => `${remote.root}/runner-${name}`);
      // One runner first, then three more. A fresh process runs its first few hundred jobs about
      // twice as slowly, so each is measured warm, and about as warm: the one by the sequential
      // jobs (WARMUP + RUNS), the three added by bursts on all four giving each about as many.
      started.push(await startRunner(postgres.url, LABEL, dataDirs[0] as string, remote.root));
      for (let i = 0; i < WARMUP_BURSTS; i++) await burstOf(sqlite, `warmup-${i}`);
      const postmaster = postmasterOf(new URL(postgres.url).port);
      const stats = await openPgDb(postgres.url, { schema: "check" });
      /** Transactions PostgreSQL committed so far (every statement outside one is one), once the counts settled. */
      const commits = async () => {
        await sleep(STATS_SETTLE_MS);
        const { rows } = await stats.db.$client.query<{ n: string }>(
          "select xact_commit as n from pg_stat_database where datname = current_database()",
        );
        return Number(rows[0]?.n ?? 0);
      };
      /** Where a job's CPU on PostgreSQL goes, per burst. */
      const split: string[] = [];
      /** One burst each way with the runners running now: throughput and CPU per job. */
      const measuredBurst = async (): Promise<BenchRow[]> => {
        const said = `${started.length} runner${started.length === 1 ? "" : "s"}`;
        const sqliteCpu = cpuMs([local.pid]);
        const sqliteS = await burstOf(sqlite, said);
        const sqliteJobMs = (cpuMs([local.pid]) - sqliteCpu) / JOBS;
        const parts = { server: [remote.pid], runners: started.map((r) => r.pid), PostgreSQL: [postmaster] };
        const committedBefore = await commits();
        const before = Object.values(parts).map(cpuMs);
        const pgS = await burstOf(pg, said);
        const perPart = Object.values(parts).map((pids, i) => (cpuMs(pids) - (before[i] ?? 0)) / JOBS);
        // Measured after the CPU: the wait for the counts would add the runners' idle polls to it.
        const transactions = ((await commits()) - committedBefore) / JOBS;
        split.push(
          `${said}: ${Object.keys(parts)
            .map((name, i) => `${name} ${perPart[i]?.toFixed(1)} ms`)
            .join(", ")}, ${transactions.toFixed(1)} PostgreSQL transactions a job`,
        );
        return [
          { metric: `burst of ${JOBS}, ${said} (launch to last end heard)`, corral: JOBS / pgS, baseline: JOBS / sqliteS, unit: "jobs/s" },
          {
            metric: `CPU per job, ${said} (server, runners, PostgreSQL, workers)`,
            corral: perPart.reduce((sum, ms) => sum + ms, 0),
            baseline: sqliteJobMs,
            unit: "ms",
            ...(started.length === 1 && { target: { bound: "max", value: CPU_SHARE * sqliteJobMs, rule: `${CPU_SHARE}× the same job on SQLite` } }),
          },
        ];
      };
      // In turns, after warm-up rounds: a change of load on a shared machine falls on both ways alike.
      const sqliteSeq: number[] = [];
      const pgSeq: number[] = [];
      const pgLocalSeq: number[] = [];
      for (let round = -WARMUP; round < RUNS; round++) {
        await sequential(sqlite, round >= 0 ? sqliteSeq : null);
        await sequential(pg, round >= 0 ? pgSeq : null);
        await sequential(pgLocal, round >= 0 ? pgLocalSeq : null);
      }
      const one = await measuredBurst();

      started.push(...(await Promise.all(dataDirs.slice(1).map((dir) => startRunner(postgres.url, LABEL, dir, remote.root)))));
      for (let i = 0; i < FOUR_WARMUP_BURSTS; i++) await burstOf(pg, `warmup-four-${i}`);
      const four = await measuredBurst();
      const rows: BenchRow[] = [
        {
          metric: "REST launch → end on the WebSocket, one at a time, 1 runner, p50",
          corral: percentile(pgSeq, 50),
          baseline: percentile(sqliteSeq, 50),
          unit: "ms",
        },
        {
          metric: "REST launch → end on the WebSocket, one at a time, 1 runner, p99",
          corral: percentile(pgSeq, 99),
          baseline: percentile(sqliteSeq, 99),
          unit: "ms",
        },
        {
          metric: "the same, run by the PostgreSQL server itself (runner `local`, no claim), p50",
          corral: percentile(pgLocalSeq, 50),
          baseline: percentile(sqliteSeq, 50),
          unit: "ms",
        },
        ...one,
        ...four,
        {
          metric: `burst of ${JOBS}, 4 runners against 1 runner, on the same ${cpus} cores`,
          corral: four[0]!.corral,
          baseline: one[0]!.corral,
          unit: "jobs/s",
          target: { bound: "min", value: one[0]!.corral, rule: "no slower than 1 runner" },
        },
      ];
      sqlite.rest.close();
      pg.rest.close();
      await stats.close();
      return {
        title: "Runners: jobs run by `corral runner` on a PostgreSQL registry",
        baseline: "the same jobs on a server with its SQLite registry, running them itself, measured in the same run.",
        rows,
        notes: [
          `A worker that does nothing (\`/bin/true\`), launched with \`POST /api/jobs\`, its end read from the \`subscribe_jobs\` WebSocket. Corral column: the server on a private PostgreSQL 15 (the test run's: fsync off), its agent labelled \`${LABEL}\`, run by built runner processes (\`corral runner\`) on the same machine; baseline: a second server, SQLite, no label.`,
          `Sequential: ${RUNS} jobs each way in turns after ${WARMUP} warm-up rounds, in one workdir; a third way, an agent without a label on the same PostgreSQL server, is run by the server itself (its runner \`local\`, whose launch is the claim): what PostgreSQL alone adds to a job. Bursts: ${JOBS} jobs, ${LAUNCHERS} launches in flight, each job in a new workdir, the agent's \`maxConcurrent\` ${CONCURRENT} on both (across all runners on PostgreSQL), after ${WARMUP_BURSTS} unmeasured bursts on SQLite; one runner runs the sequential jobs and its burst, then three more start and ${FOUR_WARMUP_BURSTS} unmeasured bursts on all four warm them about as much (a fresh process runs its first few hundred jobs about twice as slowly) before theirs. CPU from /proc (what a loaded machine does not skew as it skews throughput): on PostgreSQL the server's, the runners', the PostgreSQL server's and all their children's; on SQLite the server's and its workers'. A job's CPU on PostgreSQL, by process (workers with their runner): ${split.join("; ")}.`,
        ],
      };
    } finally {
      await Promise.all(started.map((r) => r.stop()));
      await Promise.all(servers.map((s) => s.stop()));
      await postgres.stop();
    }
  },
};
