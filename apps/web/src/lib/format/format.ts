import { costText, type JobStatus, type Usage } from "@corral/shared";

export function formatDuration(ms: number): string {
  if (ms < 0) ms = 0;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, "0")}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${String(m % 60).padStart(2, "0")}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** "3m ago", or the date when it is older than a day. */
export function formatAgo(at: number, now: number): string {
  const diff = now - at;
  if (diff < 45_000) return "just now";
  if (diff < 86_400_000) return `${formatDuration(diff).split(" ")[0]} ago`;
  return new Date(at).toLocaleDateString();
}

/**
 * A moment in a job's life as people say it: "today 14:03:05", "yesterday 23:10:02", else the
 * date ("28 Nov 14:03:05"; the year too when it is not this one). `formatFullTime` goes in its title.
 */
export function formatWhen(at: number, now: number): string {
  const d = new Date(at);
  const today = new Date(now);
  const yesterday = new Date(today.getFullYear(), today.getMonth(), today.getDate() - 1);
  const time = d.toLocaleTimeString();
  if (d.toDateString() === today.toDateString()) return `today ${time}`;
  if (d.toDateString() === yesterday.toDateString()) return `yesterday ${time}`;
  const sameYear = d.getFullYear() === today.getFullYear();
  const date = d.toLocaleDateString(undefined, { day: "numeric", month: "short", ...(sameYear ? {} : { year: "numeric" }) });
  return `${date} ${time}`;
}

/** The whole timestamp, weekday to time zone, for a title or tooltip. */
export function formatFullTime(at: number): string {
  return new Date(at).toLocaleString(undefined, { dateStyle: "full", timeStyle: "long" });
}

export function formatTime(at: number): string {
  return new Date(at).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
}

/** A job's or an attempt's cost, in the words every view uses (costText): `none` when it reported nothing. */
export function usageCost(u: Pick<Usage, "costUsd" | "costSource" | "inputTokens" | "outputTokens">, none = "—"): string {
  return costText(u.costUsd, { tokens: (u.inputTokens ?? 0) + (u.outputTokens ?? 0), source: u.costSource }, none);
}

export function formatTokens(n: number | null | undefined): string {
  if (n === null || n === undefined) return "—";
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

export { costText, formatBytes, formatUsd, plural, totalCostText } from "@corral/shared";

export const statusLabels: Record<JobStatus, string> = {
  queued: "queued",
  running: "running",
  succeeded: "succeeded",
  failed: "failed",
  cancelled: "cancelled",
  timed_out: "timed out",
  budget_exceeded: "over budget",
  lost: "lost",
};

/** One mark per status, for places with room for a character: the browser tab's title. */
export const statusMarks: Record<JobStatus, string> = {
  queued: "…",
  running: "▶",
  succeeded: "✓",
  failed: "✗",
  cancelled: "⊘",
  timed_out: "⏱",
  budget_exceeded: "$",
  lost: "?",
};

/** A job page's tab title, status first so a background tab shows how its job is doing: "✓ succeeded · <id> · Corral". */
export function jobTabTitle(job: { id: string; status: JobStatus }): string {
  return `${statusMarks[job.status]} ${statusLabels[job.status]} · ${job.id} · Corral`;
}

/** Shell-quotes one argument so the command can be pasted into a terminal as it ran. */
export function shellQuote(arg: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  // Control characters (colour codes) cannot be pasted inside '…'; bash's $'…' spells them out.
  if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(arg)) {
    const escaped = arg
      .replace(/[\\']/g, (c) => `\\${c}`)
      .replace(/[\u0000-\u001f\u007f]/g, (c) => (c === "\n" ? "\\n" : c === "\t" ? "\\t" : `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`));
    return `$'${escaped}'`;
  }
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}
