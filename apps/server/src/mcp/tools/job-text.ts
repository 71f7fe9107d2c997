import {
  formatBytes,
  formatUsd,
  plural,
  type FileChange,
  type Job,
  type JobAttempt,
  type JobFileCounts,
  type JobFiles,
  type WorktreeChange,
} from "@corral/shared";

const TAIL_CHARS = 4000;
/** Paths listed per kind of change; the rest are counted (REST GET /api/jobs/:id/files has all). */
const FILES_LISTED = 50;
const WAIT_FILES_LISTED = 20;
const CHANGES: FileChange[] = ["created", "modified", "deleted"];

function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

export function elapsed(job: Job, now = Date.now()): string {
  const from = job.startedAt ?? job.createdAt;
  return seconds((job.endedAt ?? now) - from);
}

function usageParts(u: Job["usage"]): string[] {
  const parts: string[] = [];
  if (u.inputTokens !== null) parts.push(`${u.inputTokens} tokens in`);
  if (u.outputTokens !== null) parts.push(`${u.outputTokens} tokens out`);
  if (u.cachedInputTokens) parts.push(`${u.cachedInputTokens} cached`);
  if (u.costUsd !== null) parts.push(`${formatUsd(u.costUsd)} (${u.costSource})`);
  else if ((u.inputTokens ?? 0) + (u.outputTokens ?? 0) > 0) parts.push("cost unknown (no price for this model)");
  return parts;
}

function usageLine(job: Job, attempts: number): string | null {
  const parts = usageParts(job.usage);
  if (job.usage.model) parts.unshift(`model ${job.usage.model}`);
  return parts.length ? `usage${attempts > 1 ? ` (${attempts} attempts summed)` : ""}: ${parts.join(" · ")}` : null;
}

/** An attempt's error on one line, without the exit code its line already gives. */
function attemptError(a: JobAttempt): string | null {
  if (!a.error) return null;
  const lines = a.error.split("\n");
  const rest = a.exitCode !== null && lines[0] === `exit code ${a.exitCode}` ? lines.slice(1) : lines;
  const text = rest.join(" | ").trim();
  return text ? (text.length > 300 ? `${text.slice(0, 300)}…` : text) : null;
}

/** `attempt 2: failed · exit 1 · 3.1 s · 1200 tokens in · … · <its own error>`: each try of a retried job. */
function attemptLines(attempts: JobAttempt[]): string[] {
  if (attempts.length < 2) return [];
  return attempts.map((a) => {
    const exit = a.exitCode === null ? [] : [`exit ${a.exitCode}`];
    const took = a.endedAt === null ? [] : [seconds(a.endedAt - a.startedAt)];
    const error = attemptError(a);
    return [`attempt ${a.attempt}: ${a.status}`, ...exit, ...took, ...usageParts(a.usage), ...(error ? [error] : [])].join(" · ");
  });
}

/** The first word pyCorral callers look for: `pendiente`, `listo` or `error: <why>`. */
export function statusWord(job: Job): string {
  if (job.status === "queued" || job.status === "running") return "pendiente";
  if (job.status === "succeeded") return "listo";
  return `error: ${(job.error ?? job.status).split("\n")[0]}`;
}

function details(job: Job, attempts: JobAttempt[]): string[] {
  const exit = job.exitCode === null ? [] : [`exit ${job.exitCode}`];
  const attempt = job.attempt > 1 ? [`attempt ${job.attempt}`] : [];
  // An orchestrator reading a follow-up's answer sees which turn it continued.
  const followUp = job.followUpOf ? [`follow-up of ${job.followUpOf}`] : [];
  // As the job page says: which job this one ran again.
  const relaunch = job.relaunchOf ? [`relaunch of ${job.relaunchOf}`] : [];
  return [
    [`job ${job.id}`, `agent ${job.agent}`, job.status, ...exit, ...attempt, ...followUp, ...relaunch, elapsed(job)].join(" · "),
    `workdir: ${job.workdir}`,
    ...[usageLine(job, attempts.length)].filter((l): l is string => l !== null),
    ...attemptLines(attempts),
  ];
}

const NO_FILES: JobFiles = { files: [], cutAt: null };

/**
 * One line per kind of change: `created: a.txt (12 B), b.txt (3 B)`, at most `listed` paths each;
 * then, for a list that was cut, a line saying so.
 */
export function filesLines({ files, cutAt }: JobFiles, listed = FILES_LISTED): string[] {
  const cut = cutAt === null ? [] : [`files: more than ${cutAt} changed; the list stops there (the job was no longer watched)`];
  return CHANGES.flatMap((change) => {
    const these = files.filter((f) => f.change === change);
    if (!these.length) return [];
    const shown = these.slice(0, listed).map((f) => (f.size === null ? f.path : `${f.path} (${formatBytes(f.size)})`));
    const more = these.length > listed ? [`… ${these.length - listed} more`] : [];
    return [`${change}: ${[...shown, ...more].join(", ")}`];
  }).concat(cut);
}

/** `2 created, 1 deleted`, or null when the job changed no files. */
export function filesSummary(counts: JobFileCounts | undefined): string | null {
  const parts = CHANGES.filter((c) => counts?.[c]).map((c) => `${counts?.[c]} ${c}`);
  return parts.length ? parts.join(", ") : null;
}

/**
 * A succeeded job's answer when its CLI told it apart (JSON modes), else the output's tail —
 * always the tail for a failure, where stderr says what went wrong.
 */
function outputSection(job: Job, tail: () => string): string[] {
  const answer = job.status === "succeeded" ? job.finalText?.trimEnd() : undefined;
  const text = answer || tail().trimEnd();
  if (!text) return [];
  const cut = text.length > TAIL_CHARS ? `…${text.slice(-TAIL_CHARS)}` : text;
  return [answer ? "--- answer ---" : "--- output (tail) ---", cut];
}

/**
 * A worktree job's branch, then (when `full`) its commits and `git diff --stat`, else the stat's
 * last line: what to review (corral_diff), merge or discard.
 */
export function changeLines(job: Job, change: WorktreeChange | null | undefined, full = true): string[] {
  const wt = job.worktree;
  if (!wt) return [];
  if (wt.state === "merged" || wt.state === "discarded") return [`branch ${wt.branch}: ${wt.state}`];
  const head =
    wt.state === "archived"
      ? `branch ${wt.branch} (from ${wt.base}), its worktree archived unreviewed`
      : `branch ${wt.branch} (from ${wt.base}) in ${wt.path}`;
  if (!change) return [head];
  const counts = `${plural(change.commits.length, "commit")}, ${plural(change.files, "file")} changed`;
  const stat = change.stat
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
  if (!full) return [`${head}: ${counts}${stat.length ? ` (${stat.filter((l) => / changed/.test(l)).at(-1) ?? ""})` : ""}`];
  return [`${head}: ${counts}`, ...change.commits.slice(0, 20).map((c) => `  ${c}`), ...stat.slice(-60).map((l) => `  ${l}`)];
}

/**
 * `<agent>_done`: `pendiente`, `listo` or `error: …`, then the files the job created, modified
 * and deleted, details (a line per attempt of a retried job) and the output's tail.
 */
export function doneText(
  job: Job,
  tail: () => string,
  files: JobFiles = NO_FILES,
  attempts: JobAttempt[] = [],
  change?: WorktreeChange | null,
): string {
  if (job.status === "queued" || job.status === "running") {
    return [
      "pendiente",
      `${job.status} for ${elapsed(job)} · job ${job.id} · agent ${job.agent}`,
      ...filesLines(files),
      ...changeLines(job, change),
    ].join("\n");
  }
  return [statusWord(job), ...filesLines(files), ...changeLines(job, change), ...details(job, attempts), ...outputSection(job, tail)].join("\n");
}

/** `<agent>_run`: `ok` or `error: …`, then the same files and details. */
export function runText(
  job: Job,
  tail: () => string,
  files: JobFiles = NO_FILES,
  attempts: JobAttempt[] = [],
  change?: WorktreeChange | null,
): string {
  const head = job.status === "succeeded" ? "ok" : statusWord(job);
  return [head, ...filesLines(files), ...changeLines(job, change), ...details(job, attempts), ...outputSection(job, tail)].join("\n");
}

/** One line per job, for lists and waits. */
export function jobLine(job: Job, files?: JobFileCounts): string {
  const summary = filesSummary(files);
  return `${job.id} · ${job.agent} · ${statusWord(job)} · ${elapsed(job)}${summary ? ` · files: ${summary}` : ""}`;
}

/**
 * A job's line in `corral_wait`, then the paths it changed (indented, fewer per kind than `_done`
 * lists, since one wait covers up to 100 jobs): what to read next, without another call.
 */
export function waitLines(job: Job, files: JobFiles, change?: WorktreeChange | null): string[] {
  const counts: JobFileCounts = { created: 0, modified: 0, deleted: 0 };
  for (const f of files.files) counts[f.change]++;
  return [jobLine(job, counts), ...[...filesLines(files, WAIT_FILES_LISTED), ...changeLines(job, change, false)].map((line) => `  ${line}`)];
}

/**
 * The last `lines` lines of `text`, as `tail -n` counts them (a final newline ends the last line,
 * it does not start another). `cut` says `text` is itself the end of something longer, so its
 * first line may be a fragment: it is dropped unless it is all there is.
 */
export function lastLines(text: string, lines: number, cut: boolean): string {
  const all = text.split(/(?<=\n)/);
  const whole = cut && all.length > 1 ? all.slice(1) : all;
  return whole.slice(-lines).join("");
}

export const OUTPUT_TAIL_CHARS = TAIL_CHARS;
