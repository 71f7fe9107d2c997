import { costText, LOCAL_RUNNER, plural, type Job } from "@corral/shared";

/**
 * Text from the server (prompts, names, errors) on one line of a terminal: control characters,
 * escapes included, are shown as `\n`, `\t` or `\x1b`, so a job's prompt can neither move the
 * cursor nor recolour the screen nor break a table row.
 */
export function oneLine(text: string, max = Number.POSITIVE_INFINITY): string {
  const shown = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => {
    if (c === "\n") return "\\n";
    if (c === "\t") return "\\t";
    return `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`;
  });
  return shown.length > max ? `${shown.slice(0, max - 1)}…` : shown;
}

/** Columns padded to their widest cell; the last column is not padded. */
export function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return `${[line(head), ...rows.map(line)].join("\n")}\n`;
}

export function duration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(Math.round(s % 60)).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
}

/** How long the job ran (or has been running), or `-` before it started. */
export function jobDuration(job: Job, now = Date.now()): string {
  return job.startedAt === null ? "-" : duration((job.endedAt ?? now) - job.startedAt);
}

/** A job's cost in the words the panel uses (`unpriced` for tokens without a price); `-` when it reported none. */
export function jobCost(job: Job): string {
  const u = job.usage;
  return costText(u.costUsd, { tokens: (u.inputTokens ?? 0) + (u.outputTokens ?? 0), source: u.costSource }, "-");
}

/**
 * `job abc123 (kiro) succeeded in 3.2s · 1,352 tokens · $0.0042`, with the error when it did not
 * succeed; a job another machine ran names its runner: `(kiro on runner gpu-box-1a2b3c4d)`.
 */
export function jobSummary(job: Job): string {
  const tokens = (job.usage.inputTokens ?? 0) + (job.usage.outputTokens ?? 0);
  const where = job.runner !== null && job.runner !== LOCAL_RUNNER ? ` on runner ${job.runner}` : "";
  const parts = [`job ${job.id} (${job.agent}${where}) ${job.status.replace("_", " ")} in ${jobDuration(job)}`];
  if (tokens) parts.push(plural(tokens, "token"));
  if (tokens || job.usage.costUsd !== null) parts.push(jobCost(job));
  const error = job.status !== "succeeded" && job.error ? `: ${oneLine(job.error, 500)}` : "";
  return `${parts.join(" · ")}${error}`;
}

/** Writes `value` as one line of JSON to stdout (`--json`). */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}
