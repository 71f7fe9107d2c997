// `pnpm bench [name…]`: runs the registered benchmarks in order and prints each one's table
// (markdown, ready for docs/benchmarks.md). Figures are ratios against a baseline measured in the same run.
import os from "node:os";
import { burst } from "./burst.js";
import { dispatch } from "./dispatch.js";
import { drift } from "./drift.js";
import { latency } from "./latency.js";
import { mcpSize } from "./mcp-size.js";
import { registry, registryPg } from "./registry.js";
import { registryCopy } from "./registry-copy.js";
import { runners } from "./runners.js";
import { renderTable, targetMet, type Benchmark, type BenchRow } from "./lib/stats.js";
import { startup } from "./startup.js";
import { stream } from "./stream.js";

const benchmarks: Benchmark[] = [dispatch, burst, drift, latency, mcpSize, registry, registryPg, registryCopy, runners, startup, stream];

const only = process.argv.slice(2);
const unknown = only.filter((name) => !benchmarks.some((b) => b.name === name));
if (unknown.length) {
  process.stderr.write(`unknown benchmark ${unknown.join(", ")}; choose from ${benchmarks.map((b) => b.name).join(", ")}\n`);
  process.exit(2);
}
const cpus = os.cpus();
process.stdout.write(
  `Machine: ${cpus.length} × ${cpus[0]?.model.trim() ?? "unknown CPU"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, ` +
    `${os.type()} ${os.release()}, Node ${process.versions.node}\n\n`,
);
const targeted: { bench: string; row: BenchRow }[] = [];
for (const bench of benchmarks.filter((b) => only.length === 0 || only.includes(b.name))) {
  const t0 = performance.now();
  const table = await bench.run();
  for (const row of table.rows) if (row.target) targeted.push({ bench: bench.name, row });
  process.stdout.write(`${renderTable(table)}\n\n_(${bench.name}: ${((performance.now() - t0) / 1000).toFixed(1)} s)_\n\n`);
}
const missed = targeted.filter(({ row }) => !targetMet(row));
process.stdout.write(`Targets: ${targeted.length - missed.length} of ${targeted.length} met.\n`);
for (const { bench, row } of missed) process.stdout.write(`  missed: ${bench}, ${row.metric}\n`);
