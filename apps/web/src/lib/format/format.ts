import { formatUsd, type JobStatus } from "@corral/shared";

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

/** Time of day for today's moments, date and time for older ones. */
export function formatClock(at: number, now: number): string {
  const d = new Date(at);
  if (d.toDateString() === new Date(now).toDateString()) return d.toLocaleTimeString();
  return formatTime(at);
}

export function formatTime(at: number): string {
  return new Date(at).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
}

/** Null is "unpriced", never $0: a missing price must not pass for free. */
export function formatCost(usd: number | null | undefined): string {
  return usd === null || usd === undefined ? "unpriced" : formatUsd(usd);
}

export function formatTokens(n: number | null | undefined): string {
  if (n === null || n === undefined) return "—";
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

export { formatBytes, plural } from "@corral/shared";

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
