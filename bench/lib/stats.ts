// Percentiles and the markdown table every benchmark prints.

/** Nearest-rank percentile of unsorted samples. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) throw new Error("no samples");
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export const median = (samples: readonly number[]) => percentile(samples, 50);

/**
 * What a row must reach, in the row's unit: `corral` at most (or at least) `value`. `rule` says
 * how the value was derived from figures of the same run, e.g. "1.3× baseline".
 */
export interface Target {
  bound: "max" | "min";
  value: number;
  rule: string;
}

/** One line of a benchmark's table: Corral's figure, the baseline's, and Corral ÷ baseline. */
export interface BenchRow {
  metric: string;
  corral: number;
  baseline: number;
  unit: "ms" | "MiB" | "jobs/s" | "s" | "MiB/s" | "chars";
  target?: Target;
}

export const targetMet = (row: BenchRow): boolean =>
  !row.target || (row.target.bound === "max" ? row.corral <= row.target.value : row.corral >= row.target.value);

export interface BenchTable {
  title: string;
  /** What the baseline is: the physical floor measured in the same run. */
  baseline: string;
  rows: BenchRow[];
  notes?: string[];
}

/** A benchmark module: `bench/run.ts` imports it and prints what `run` returns. */
export interface Benchmark {
  name: string;
  run(): Promise<BenchTable>;
}

function fmt(value: number, unit: BenchRow["unit"]): string {
  const digits = value >= 100 ? 0 : value >= 10 ? 1 : 2;
  return `${value.toFixed(digits)} ${unit}`;
}

function renderTarget(row: BenchRow): string {
  if (!row.target) return "";
  const { bound, value, rule } = row.target;
  return `${bound === "max" ? "≤" : "≥"} ${fmt(value, row.unit)} (${rule}): ${targetMet(row) ? "met" : "**missed**"}`;
}

export function renderTable(table: BenchTable): string {
  const lines = [
    `### ${table.title}`,
    "",
    `Baseline: ${table.baseline}`,
    "",
    "| metric | Corral | baseline | ratio | target |",
    "| --- | ---: | ---: | ---: | --- |",
    ...table.rows.map(
      (r) => `| ${r.metric} | ${fmt(r.corral, r.unit)} | ${fmt(r.baseline, r.unit)} | ${(r.corral / r.baseline).toFixed(2)}× | ${renderTarget(r)} |`,
    ),
    ...(table.notes?.length ? ["", ...table.notes] : []),
  ];
  return lines.join("\n");
}
