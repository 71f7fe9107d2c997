// Output streaming: a worker printing 100 MiB as fast as it can, through capture, the output log
// and one WebSocket subscriber, against the same worker's stdout read straight from a pipe; the
// server's memory meanwhile; and line latency (worker write → WebSocket receipt) at 100 lines/s
// against the same worker's lines read straight from its stdout pipe.
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { isFinalStatus, parseServerMessage } from "../packages/shared/src/index.js";
import { freePort, freshBenchDir, memoryOf, sleep, waitHealthy } from "./lib/server.js";
import { median, percentile, type Benchmark, type BenchRow } from "./lib/stats.js";
import { WebSocket } from "./lib/ws.js";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const fakeCli = path.join(repo, "apps/server/test/fixtures/fake-cli.mjs");
const fakeBin = path.join(repo, "apps/server/test/fixtures/bin");
const TOKEN = "bench-token-0123456789abcdef";
const TOTAL = Number(process.env.BENCH_STREAM_BYTES ?? 100 * 1024 * 1024);
const RATE = 100;
const LINES = Number(process.env.BENCH_STREAM_LINES ?? 1000);
/** Runs of each side, alternated; the median is kept (2 cores shared with other work are noisy). */
const RUNS = Number(process.env.BENCH_STREAM_RUNS ?? 5);
/** "Flat": what the server may hold above its idle RSS, far below the output it moves. */
const RSS_HEADROOM_MIB = 64;
/**
 * Streamed once before the idle RSS is read, so that the baseline holds the young generation V8
 * sizes for streaming, as a server that has run jobs does (a start holds it small:
 * lib/young-generation.ts); what the runs then add is what streaming keeps.
 */
const WARM_UP_BYTES = 8 * 1024 * 1024;
/** The text-mode fake CLI: what it prints is the job's output as is. */
const AGENT = "kiro";
const DONE_LINE = "done kiro-cli-chat\n";

interface Server {
  url: string;
  pid: number;
  root: string;
  stop(): Promise<void>;
}

/** The server from its sources (as `pnpm dev` runs it), with the fake CLIs on PATH. */
async function startServer(): Promise<Server> {
  const root = freshBenchDir("corral-bench-stream-");
  const port = await freePort();
  const child = spawn(process.execPath, ["--import", "tsx", "--conditions=corral-source", path.join(repo, "apps/server/src/server.ts")], {
    cwd: repo,
    stdio: ["ignore", "ignore", "inherit"],
    env: {
      PATH: `${fakeBin}${path.delimiter}${process.env.PATH ?? "/usr/bin:/bin"}`,
      HOME: root,
      CORRAL_PORT: String(port),
      CORRAL_DATA_DIR: path.join(root, "data"),
      CORRAL_WORKDIR_ROOTS: root,
      CORRAL_TOKEN: TOKEN,
      CORRAL_LOG_LEVEL: "warn",
    },
  });
  const url = `http://127.0.0.1:${port}`;
  await waitHealthy(`${url}/api/health`, child);
  return {
    url,
    pid: child.pid!,
    root,
    async stop() {
      if (child.exitCode === null) {
        await new Promise<void>((resolve) => {
          child.once("exit", () => resolve());
          child.kill("SIGTERM");
        });
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** The worker as Corral runs kiro (the prompt after `--`), its stdout read straight from a pipe. */
function runWorker(prompt: string, onData: (chunk: Buffer) => void): Promise<void> {
  const child = spawn(process.execPath, [fakeCli, "kiro-cli-chat", "--", prompt], { stdio: ["ignore", "pipe", "inherit"] });
  child.stdout.on("data", onData);
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      if (code === 0) resolve();
      else reject(new Error(`fake worker exited with ${code}`));
    });
  });
}

/** Launches a job, follows it from cursor 0 on one WebSocket, resolves when its final status arrives. */
async function streamJob(server: Server, prompt: string, onText: (text: string) => void): Promise<void> {
  const ws = new WebSocket(`${server.url.replace(/^http/, "ws")}/api/ws`, { headers: { authorization: `Bearer ${TOKEN}` } });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  const res = await fetch(`${server.url}/api/jobs`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ agent: AGENT, prompt, workdir: path.join(server.root, "work") }),
  });
  if (res.status !== 201) throw new Error(`launch: ${res.status} ${await res.text()}`);
  const { id } = (await res.json()) as { id: string };
  let cursor = 0;
  await new Promise<void>((resolve, reject) => {
    ws.on("message", (data) => {
      // As the panel reads it (apps/web/src/lib/transport/ws.ts).
      const msg = parseServerMessage(data.toString());
      if (!("jobId" in msg) || msg.jobId !== id) return;
      if (msg.type === "output") {
        if (msg.cursor <= cursor) reject(new Error(`cursor ${msg.cursor} after ${cursor}: output repeated or out of order`));
        cursor = msg.cursor;
        onText(msg.text);
      }
      if (msg.type === "status" && isFinalStatus(msg.job.status)) {
        if (msg.job.status === "succeeded") resolve();
        else reject(new Error(`job ${msg.job.status}: ${msg.job.error}`));
      }
    });
    ws.send(JSON.stringify({ type: "subscribe_job", jobId: id, cursor: 0 }));
  });
  ws.close();
}

/** Write → receipt delays of `tick <i> <epoch ms>` lines, whatever the chunking. */
function tickLatencies(): { feed(text: string): void; samples: number[] } {
  const samples: number[] = [];
  let partial = "";
  return {
    samples,
    feed(text) {
      const now = performance.timeOrigin + performance.now();
      const lines = (partial + text).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        const m = /^tick \d+ ([\d.]+)$/.exec(line);
        if (m) samples.push(now - Number(m[1]));
      }
    },
  };
}

export const stream: Benchmark = {
  name: "stream",
  async run() {
    const mib = TOTAL / 2 ** 20;
    const bytesPrompt = `bytes ${TOTAL}`;

    const server = await startServer();
    try {
      await streamJob(server, `bytes ${WARM_UP_BYTES}`, () => {});
      await sleep(500);
      const idle = memoryOf(server.pid).rssMiB;
      let peakRss = idle;
      const sampler = setInterval(() => {
        peakRss = Math.max(peakRss, memoryOf(server.pid).rssMiB);
      }, 20);
      const piped: number[] = [];
      const streamed: number[] = [];
      for (let run = 0; run < RUNS; run++) {
        let bytes = 0;
        let t0 = performance.now();
        await runWorker(bytesPrompt, (chunk) => (bytes += chunk.length));
        piped.push((performance.now() - t0) / 1000);
        if (bytes !== TOTAL + DONE_LINE.length) throw new Error(`the pipe gave ${bytes} bytes of ${TOTAL + DONE_LINE.length}`);
        let received = 0;
        t0 = performance.now();
        await streamJob(server, bytesPrompt, (text) => (received += Buffer.byteLength(text)));
        streamed.push((performance.now() - t0) / 1000);
        if (received !== TOTAL + DONE_LINE.length) throw new Error(`the subscriber got ${received} bytes of ${TOTAL + DONE_LINE.length}`);
      }
      clearInterval(sampler);
      const pipe = median(piped);
      const through = median(streamed);
      const hwm = memoryOf(server.pid).peakMiB;

      const ticksPrompt = `ticks ${RATE} ${LINES}`;
      const direct = tickLatencies();
      await runWorker(ticksPrompt, (chunk) => direct.feed(chunk.toString()));
      const viaWs = tickLatencies();
      await streamJob(server, ticksPrompt, (text) => viaWs.feed(text));
      if (viaWs.samples.length !== LINES) throw new Error(`got ${viaWs.samples.length} of ${LINES} tick lines`);

      const rows: BenchRow[] = [
        { metric: `time to move ${mib} MiB of output, median of ${RUNS}`, corral: through, baseline: pipe, unit: "s" },
        {
          metric: "throughput to the subscriber",
          corral: mib / through,
          baseline: mib / pipe,
          unit: "MiB/s",
          target: { bound: "min", value: (0.3 * mib) / pipe, rule: "30 % of the pipe" },
        },
        {
          metric: `server RSS, peak while streaming ${RUNS} × ${mib} MiB (sampled every 20 ms)`,
          corral: peakRss,
          baseline: idle,
          unit: "MiB",
          target: { bound: "max", value: idle + RSS_HEADROOM_MIB, rule: `idle + ${RSS_HEADROOM_MIB} MiB` },
        },
        {
          metric: `line latency p50 at ${RATE} lines/s`,
          corral: percentile(viaWs.samples, 50),
          baseline: percentile(direct.samples, 50),
          unit: "ms",
        },
        {
          metric: `line latency p99 at ${RATE} lines/s`,
          corral: percentile(viaWs.samples, 99),
          baseline: percentile(direct.samples, 99),
          unit: "ms",
          target: { bound: "max", value: 20, rule: "the issue's 20 ms" },
        },
      ];
      return {
        title: `Output streaming: ${mib} MiB through capture, the output log and one WebSocket subscriber`,
        baseline:
          "time and throughput: the same worker's stdout read straight from a pipe (median of as many runs, alternated); RSS: the same server idle before the runs, after one 8 MiB warm-up run; latency: the same worker's lines read straight from its stdout pipe",
        rows,
        notes: [
          `Every run's subscriber received all ${TOTAL + DONE_LINE.length} bytes, cursors strictly increasing. Server VmHWM (peak since start): ${hwm.toFixed(0)} MiB. ` +
            `Runs (s): pipe ${piped.map((t) => t.toFixed(2)).join(", ")}; Corral ${streamed.map((t) => t.toFixed(2)).join(", ")}.`,
          "The server runs from its sources through tsx (its RSS includes the loader).",
        ],
      };
    } finally {
      await server.stop();
    }
  },
};
