import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

/** Fields of /proc/<pid>/stat after the command name: state, ppid, pgrp, …, starttime (22nd overall). */
function readStat(pid: number): { state: string; ppid: number; pgrp: number; startTicks: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0] ?? "", ppid: Number(fields[1]), pgrp: Number(fields[2]), startTicks: Number(fields[19]) };
  } catch {
    return null;
  }
}

/** The kernel's start time of a process: with the pid, it tells a process from a later one that reused the pid. */
export function processStartTicks(pid: number): number | null {
  return readStat(pid)?.startTicks ?? null;
}

/** The live processes whose parent is `pid`. */
export function childrenOf(pid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  return entries.map(Number).filter((child) => Number.isInteger(child) && readStat(child)?.ppid === pid && processAlive(child));
}

/**
 * The processes a worker's command runs as, below its `sh` wrapper `pid` and past any bubblewrap
 * sandbox: bwrap passes no signal on (its outer process dies of SIGINT, and the sandbox with it),
 * so a signal meant for the command goes to what bwrap started.
 */
export function commandProcesses(pid: number): number[] {
  return childrenOf(pid).flatMap((child) => (commOf(child) === "bwrap" ? commandProcesses(child) : [child]));
}

function commOf(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return null;
  }
}

/** True while the process lives (a zombie, exited but not yet reaped, does not). */
export function processAlive(pid: number): boolean {
  const state = readStat(pid)?.state;
  return state !== undefined && state !== "Z" && state !== "X";
}

/**
 * True while any live (non-zombie) process is in the group. Zombies are skipped because an
 * orphan's zombie may never be reaped when PID 1 of a container does not reap.
 */
export function groupAlive(pgid: number): boolean {
  if (!isWorkerGroup(pgid)) return false;
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return true;
  }
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const stat = readStat(pid);
    if (stat && stat.pgrp === pgid && stat.state !== "Z" && stat.state !== "X") return true;
  }
  return false;
}

/**
 * A group a worker can lead: kill(-0) would signal this server's own group and kill(-1) every
 * process it may signal, so a pid of 0, 1, null (negated to -0) or garbage read from the
 * registry never reaches `process.kill`.
 */
export function isWorkerGroup(pgid: number): boolean {
  return Number.isSafeInteger(pgid) && pgid > 1;
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  if (!isWorkerGroup(pgid)) return;
  try {
    process.kill(-pgid, signal);
  } catch {
    // Already gone.
  }
}

/**
 * SIGTERM to the whole group, SIGKILL after the grace period; resolves once no member is left.
 * `onKill` is told once SIGKILL has been sent, so the job can record that it came to that.
 */
export async function killGroup(pgid: number, graceMs: number, onKill?: () => void): Promise<void> {
  if (!groupAlive(pgid)) return;
  signalGroup(pgid, "SIGTERM");
  const deadline = Date.now() + graceMs;
  let delay = 10;
  while (groupAlive(pgid)) {
    if (Date.now() >= deadline) {
      signalGroup(pgid, "SIGKILL");
      onKill?.();
      while (groupAlive(pgid)) await sleep(20);
      return;
    }
    await sleep(delay);
    delay = Math.min(delay * 2, 100);
  }
}
