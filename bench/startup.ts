// Cold start (spawn of `node apps/server/dist/server.js` with an empty data dir → first 200 from
// /api/health) and idle RSS, against a bare Node HTTP server started and measured the same way.
import { memoryOf, sleep, startBareNode, startCorral } from "./lib/server.js";
import { median, type Benchmark, type Target } from "./lib/stats.js";

const STARTS = 5;
/** Idle RSS is read this long after healthy: what a server that has just started holds. */
const SETTLE_MS = 3000;
/**
 * V8 gives back its young generation, grown by start-up's allocations, only once the process has
 * been idle for a while (about 20 s here): one more start is read after this long.
 */
const LONG_IDLE_MS = 30_000;
/** Issue 13's targets are absolute: a start is mostly fixed work, not a multiple of Node's own. */
const START_TARGET: Target = { bound: "max", value: 300, rule: "issue 13" };
const RSS_TARGET: Target = { bound: "max", value: 80, rule: "issue 13" };

export const startup: Benchmark = {
  name: "startup",
  async run() {
    const corralStart: number[] = [];
    const corralRss: number[] = [];
    const bareStart: number[] = [];
    const bareRss: number[] = [];
    for (let i = 0; i < STARTS; i++) {
      const server = await startCorral();
      corralStart.push(server.startMs);
      await sleep(SETTLE_MS);
      corralRss.push(memoryOf(server.pid).rssMiB);
      await server.stop();

      const bare = await startBareNode();
      bareStart.push(bare.startMs);
      await sleep(SETTLE_MS);
      bareRss.push(memoryOf(bare.pid).rssMiB);
      await bare.stop();
    }
    const [server, bare] = [await startCorral(), await startBareNode()];
    await sleep(LONG_IDLE_MS);
    const [corralSettled, bareSettled] = [memoryOf(server.pid).rssMiB, memoryOf(bare.pid).rssMiB];
    await Promise.all([server.stop(), bare.stop()]);
    return {
      title: "Cold start and idle memory",
      baseline: "a bare `node -e` HTTP server answering 200, spawned and polled the same way.",
      rows: [
        { metric: "cold start to healthy (median)", corral: median(corralStart), baseline: median(bareStart), unit: "ms", target: START_TARGET },
        {
          metric: `idle RSS ${SETTLE_MS / 1000} s after healthy (median)`,
          corral: median(corralRss),
          baseline: median(bareRss),
          unit: "MiB",
          target: RSS_TARGET,
        },
        { metric: `RSS after ${LONG_IDLE_MS / 1000} s idle (one start)`, corral: corralSettled, baseline: bareSettled, unit: "MiB" },
      ],
      notes: [
        `${STARTS} starts each, every Corral start with a new data dir (database created and migrated); RSS read ${SETTLE_MS / 1000} s after healthy.`,
      ],
    };
  },
};
