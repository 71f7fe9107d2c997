// Pure formatting helpers that the server's texts (MCP answers, error messages) and the panel share,
// so a cost, a day or a log line reads the same wherever it is shown.

/** `2026-11-29`: the local calendar day of a moment, as cost reports, ranges and budgets name days. */
export function localDay(at: number | Date): string {
  const d = new Date(at);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
}

/**
 * Dollars, one rule wherever money shows: cents from $1 up ($12.50); below $1, two significant
 * digits ($0.50, $0.013, $0.0042), so amounts of one size read with one precision ($0.020 beside
 * $0.013, never $0.02 beside $0.0134) and a small job still differs from a $0.010 budget; `$0` for
 * nothing, and never `$0.0000` for a cost that is not nothing.
 */
export function formatUsd(usd: number): string {
  const sign = usd < 0 ? "-" : "";
  const abs = Math.abs(usd);
  if (abs === 0) return "$0";
  if (abs < 0.0001) return `${sign}<$0.0001`;
  const small = Number(abs.toPrecision(2));
  // 0.996 rounds to 1.0 at two digits: it is then a dollar amount, shown in cents.
  if (small >= 1) return `${sign}$${abs.toFixed(2)}`;
  return `${sign}$${abs.toPrecision(2)}`;
}

/**
 * What one cost says (a job's, an attempt's, a step's), decided here for every view and the
 * server's Readable lines alike. `null` for tokens used is unknown, never free: "unpriced". A
 * worker that reports $0 for tokens it used is saying it has no price (OpenCode with a model its
 * config does not price), so that too is "unpriced" unless Corral estimated the $0 (a local
 * Ollama model). No cost and no tokens is `none` ("—", or the view's own words).
 */
export function costText(
  usd: number | null | undefined,
  usage: { tokens?: number | null; source?: "reported" | "estimated" | null } = {},
  none = "—",
): string {
  const used = (usage.tokens ?? 0) > 0;
  // A negative or non-finite figure (a worker's output is untrusted) is no cost at all, as the registry stores it.
  if (usd === null || usd === undefined || !Number.isFinite(usd) || usd < 0) return used ? "unpriced" : none;
  if (usd === 0 && used && usage.source !== "estimated") return "unpriced";
  return formatUsd(usd);
}

/**
 * What a sum of jobs' costs says: "nothing ran" with no jobs, "no usage" when none reported
 * any, "unpriced" when none has a price, "$1.20 + 2 unpriced" when some have none (partly
 * priced), else the amount. `unpricedApart`: the view counts the unpriced jobs beside it, so
 * the amount stands alone.
 */
export function totalCostText(t: { jobs: number; costUsd: number | null; unpricedJobs: number }, unpricedApart = false): string {
  if (t.jobs === 0) return "nothing ran";
  if (t.costUsd === null) return t.unpricedJobs > 0 ? "unpriced" : "no usage";
  return t.unpricedJobs > 0 && !unpricedApart ? `${formatUsd(t.costUsd)} + ${t.unpricedJobs} unpriced` : formatUsd(t.costUsd);
}

/** File sizes in binary units: `12 B`, `3.4 KB`, `1.2 MB`, `2.0 GB`. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 * 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  return `${(n / 1024 / 1024 / 1024).toFixed(1)} GB`;
}

/**
 * A count with its noun: `1 line`, `2 lines`, `1,234 lines`. `many` is for nouns that do not
 * just take an s (`1 entry`, `2 entries`).
 */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;
}

/** ECMA-48 control sequences (colours, cursor moves, erases): ESC [ parameters intermediates final. */
const CSI = /\u001b\[[0-?]*[ -/]*[@-~]/g;

/** Text without terminal control sequences, for matching, searching and one-line displays. */
export function stripAnsi(text: string): string {
  return text.includes("\u001b") ? text.replace(CSI, "") : text;
}
