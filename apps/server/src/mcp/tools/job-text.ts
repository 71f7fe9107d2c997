import type { Job } from "@corral/shared";

const TAIL_CHARS = 4000;

function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

export function elapsed(job: Job, now = Date.now()): string {
  const from = job.startedAt ?? job.createdAt;
  return seconds((job.endedAt ?? now) - from);
}

function usageLine(job: Job): string | null {
  const u = job.usage;
  const parts: string[] = [];
  if (u.model) parts.push(`model ${u.model}`);
  if (u.inputTokens !== null) parts.push(`${u.inputTokens} tokens in`);
  if (u.outputTokens !== null) parts.push(`${u.outputTokens} tokens out`);
  if (u.costUsd !== null) parts.push(`$${u.costUsd.toFixed(4)} (${u.costSource})`);
  return parts.length ? `usage: ${parts.join(" · ")}` : null;
}

/** The first word pyCorral callers look for: `pendiente`, `listo` or `error: <why>`. */
export function statusWord(job: Job): string {
  if (job.status === "queued" || job.status === "running") return "pendiente";
  if (job.status === "succeeded") return "listo";
  return `error: ${(job.error ?? job.status).split("\n")[0]}`;
}

function details(job: Job): string[] {
  const exit = job.exitCode === null ? [] : [`exit ${job.exitCode}`];
  return [
    [`job ${job.id}`, `agent ${job.agent}`, job.status, ...exit, elapsed(job)].join(" · "),
    `workdir: ${job.workdir}`,
    ...[usageLine(job)].filter((l): l is string => l !== null),
  ];
}

function outputSection(tail: string): string[] {
  const text = tail.trimEnd();
  if (!text) return [];
  const cut = text.length > TAIL_CHARS ? `…${text.slice(-TAIL_CHARS)}` : text;
  return ["--- output (tail) ---", cut];
}

/** `<agent>_done`: `pendiente`, `listo` or `error: …`, then details and the output's tail. */
export function doneText(job: Job, tail: string): string {
  if (job.status === "queued" || job.status === "running") {
    return ["pendiente", `${job.status} for ${elapsed(job)} · job ${job.id} · agent ${job.agent}`].join("\n");
  }
  return [statusWord(job), ...details(job), ...outputSection(tail)].join("\n");
}

/** `<agent>_run`: `ok` or `error: …`, then the same details. */
export function runText(job: Job, tail: string): string {
  const head = job.status === "succeeded" ? "ok" : statusWord(job);
  return [head, ...details(job), ...outputSection(tail)].join("\n");
}

/** One line per job, for lists and waits. */
export function jobLine(job: Job): string {
  return `${job.id} · ${job.agent} · ${statusWord(job)} · ${elapsed(job)}`;
}

export const OUTPUT_TAIL_CHARS = TAIL_CHARS;
