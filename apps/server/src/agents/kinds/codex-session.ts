import { closeSync, openSync, readdirSync, readSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { UUID } from "../worker-session.js";

/** The `turn_context` record comes after the session header (~20 KB of instructions) and the first messages. */
const READ_LIMIT = 1024 * 1024;
/** Day folders looked at, newest first: a run that started just before midnight is in yesterday's. */
const DAYS = 3;

const newestFirst = (dir: string): string[] => {
  try {
    return readdirSync(dir)
      .filter((n) => /^\d+$/.test(n))
      .sort()
      .reverse();
  } catch {
    return [];
  }
};

/** `$CODEX_HOME/sessions/YYYY/MM/DD/`, the latest few days. */
function recentDayDirs(sessions: string): string[] {
  const days: string[] = [];
  for (const y of newestFirst(sessions)) {
    for (const m of newestFirst(path.join(sessions, y))) {
      for (const d of newestFirst(path.join(sessions, y, m))) {
        days.push(path.join(sessions, y, m, d));
        if (days.length === DAYS) return days;
      }
    }
  }
  return days;
}

function head(file: string): string {
  const fd = openSync(file, "r");
  try {
    const buf = Buffer.alloc(READ_LIMIT);
    const n = readSync(fd, buf, 0, READ_LIMIT, 0);
    return buf.subarray(0, n).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/** The model of the first `turn_context` record of a rollout file's text. */
export function rolloutModel(text: string): string | undefined {
  for (const line of text.split("\n")) {
    if (!line.includes('"turn_context"')) continue;
    try {
      const record = JSON.parse(line) as { type?: unknown; payload?: { model?: unknown } };
      if (record.type === "turn_context" && typeof record.payload?.model === "string" && record.payload.model) return record.payload.model;
    } catch {
      // A line cut at the read limit, or one that is not JSON: look further.
    }
  }
  return undefined;
}

/**
 * The model a `codex exec` run used. Its JSON events never name it (README of the samples), but
 * Codex records every run in `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`,
 * whose `turn_context` records carry the model it resolved from `-m`, its config or its default.
 */
export function codexSessionModel(threadId: string, env: Record<string, string | undefined>): string | undefined {
  // Codex's thread ids are UUIDs; anything else is not looked up (it becomes part of a path).
  if (!UUID.test(threadId)) return undefined;
  const home = env.CODEX_HOME || path.join(env.HOME || os.homedir(), ".codex");
  const suffix = `-${threadId}.jsonl`;
  for (const day of recentDayDirs(path.join(home, "sessions"))) {
    let names: string[];
    try {
      names = readdirSync(day);
    } catch {
      continue;
    }
    const name = names.find((n) => n.startsWith("rollout-") && n.endsWith(suffix));
    if (!name) continue;
    try {
      return rolloutModel(head(path.join(day, name)));
    } catch {
      return undefined;
    }
  }
  return undefined;
}
