import { closeSync, constants, type FSWatcher, fstatSync, openSync, readdirSync, readFileSync, readSync, rmSync, watch, writeSync } from "node:fs";
import path from "node:path";
import { PRIVATE_FILE_MODE } from "../lib/private-files.js";
import { groupAlive, processStartTicks } from "./process-group.js";
import type { Spawner } from "./spawner.js";

/** Where a job keeps its files inside the data dir. */
export interface JobDataPaths {
  /** The data dir they are in. */
  dataDir: string;
  dir: string;
  attempt: number;
  /** The attempt's raw stdout and stderr, written by the worker itself. */
  out: string;
  err: string;
  /**
   * Written by the wrapper when the worker ends, so an exit is known even if Corral was down: its
   * code, and by its mtime when (see readExit).
   */
  exit: string;
  /** The job's output log (all attempts), read by cursor. */
  log: string;
}

export function jobDataPaths(dataDir: string, jobId: string, attempt = 1): JobDataPaths {
  const dir = path.join(dataDir, "jobs", jobId);
  const raw = (name: string) => path.join(dir, `attempt-${attempt}.${name}`);
  return { dataDir, dir, attempt, out: raw("stdout"), err: raw("stderr"), exit: raw("exit"), log: path.join(dir, "output.log") };
}

export interface WorkerProcess {
  pid: number;
  /** Start time of the process, to recognise it after a restart. */
  pidStart: number | null;
  ended: Promise<WorkerExit>;
}

export interface WorkerExit {
  /** The worker's exit code; null when it died by a signal or its exit was not recorded. */
  code: number | null;
  /**
   * When it ended (ms since the epoch), from its exit file: known when it ended while no server
   * followed it. Unset when its end was seen as it happened (the job then ends once its group is gone).
   */
  at?: number;
}

/**
 * The prompt and every argument reach the worker as argv: `sh` only runs `"$@"` and records the
 * exit code (owner-only, like every file in the data dir), it never parses them. Its own group,
 * so a kill reaches every descendant. The code is written with a builtin, not renamed into place
 * with `mv`: that would be one more process per job. It is written over the placeholder made
 * before the worker started (`<>` neither truncates nor needs a block of its own), so it is
 * recorded even when the worker filled the disk. A reader may find only the placeholder while
 * `sh` is still writing (see reattachWorker).
 */
const WRAPPER = '"$@"; code=$?; umask 077; echo $code 1<> "$0"; exit $code';

/** Room for any exit code; blanks are no number, so a reader takes it for "not written yet". */
const EXIT_PLACEHOLDER = Buffer.from(`${" ".repeat(15)}\n`);

/**
 * The exit file as the wrapper finds it: the placeholder, in a file of its own. Whatever was at its
 * path (a link or a FIFO an earlier worker left there) is removed, never written through.
 */
function makeExitPlaceholder(file: string): void {
  rmSync(file, { force: true });
  const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, PRIVATE_FILE_MODE);
  try {
    writeSync(fd, EXIT_PLACEHOLDER);
  } finally {
    closeSync(fd);
  }
}

/**
 * Starts the worker through the spawner (see spawner.ts), which reports its exit. Should the
 * spawner end first, the worker is followed as after a restart: by its exit file and its pid.
 */
export async function spawnWorker(
  invocation: { command: string; args: string[]; cwd: string; fd3?: Buffer },
  env: Record<string, string>,
  files: JobDataPaths,
  spawner: Spawner,
): Promise<WorkerProcess> {
  makeExitPlaceholder(files.exit);
  const started = await spawner.spawn({
    file: "/bin/sh",
    args: ["-c", WRAPPER, files.exit, invocation.command, ...invocation.args],
    cwd: invocation.cwd,
    env,
    out: files.out,
    err: files.err,
    ...(invocation.fd3 && { fd3: invocation.fd3.toString("base64") }),
  });
  if (!("pid" in started)) {
    // A spawner killed between starting the worker and answering: the worker may run all the same.
    const found = started.unanswered ? findWrapper(files.exit) : null;
    if (found) return reattachWorker(found.pid, found.pidStart, files);
    const code = started.unanswered ? (readExit(files.exit)?.code ?? null) : null;
    const why = started.error ?? `could not start ${invocation.command}`;
    throw new Error(code === null ? why : `${why}; it ran all the same and exited with code ${code}`);
  }
  const { pid, pidStart } = started;
  const ended = started.exit.then((exit) => (exit ? { code: exit.code } : reattachWorker(pid, pidStart, files).ended));
  return { pid, pidStart, ended };
}

/**
 * The wrapper of a job's attempt, found by its command line (`/bin/sh -c WRAPPER <exit file> …`):
 * the exit file's path names one attempt of one job. Read only when a spawner ended before
 * answering, so a worker it did start is followed rather than left running unseen.
 */
export function findWrapper(exitFile: string): { pid: number; pidStart: number | null } | null {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return null;
  }
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    } catch {
      continue; // gone meanwhile
    }
    if (argv[0] === "/bin/sh" && argv[1] === "-c" && argv[2] === WRAPPER && argv[3] === exitFile) {
      return { pid, pidStart: processStartTicks(pid) };
    }
  }
  return null;
}

/**
 * The exit code the wrapper recorded, and when: the file's mtime is the moment it was written, so a
 * worker that ended while Corral was down keeps its own end time. Null while nothing is recorded.
 */
export function readExit(file: string): { code: number; at: number } | null {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const buf = Buffer.alloc(64);
    const code = Number.parseInt(buf.toString("utf8", 0, readSync(fd, buf, 0, buf.length, 0)).trim(), 10);
    // Whole milliseconds, as every time in the registry (PostgreSQL keeps them as bigint).
    return Number.isNaN(code) ? null : { code, at: Math.floor(fstatSync(fd).mtimeMs) };
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** Is the process that Corral started (same pid and start time) still there? */
export function isSameProcessAlive(pid: number, pidStart: number | null): boolean {
  const start = processStartTicks(pid);
  return start !== null && (pidStart === null || start === pidStart) && groupAlive(pid);
}

/**
 * Follows a worker started before this server did: it ends when its exit code is in the exit file
 * or it is gone. The wrapper writing the code is seen at once (a watch on the job's dir); the poll
 * is for a worker gone without writing one, which raises no event. An exit file still empty while
 * the wrapper lives is being written: wait for it.
 */
export function reattachWorker(pid: number, pidStart: number | null, files: JobDataPaths, pollMs = 250): WorkerProcess {
  const ended = new Promise<WorkerExit>((resolve) => {
    let timer: NodeJS.Timeout | null = null;
    let watcher: FSWatcher | null = null;
    let settled = false;
    const check = () => {
      if (settled) return;
      let exit = readExit(files.exit);
      if (exit === null && isSameProcessAlive(pid, pidStart)) return;
      exit ??= readExit(files.exit);
      settled = true;
      if (timer) clearTimeout(timer);
      watcher?.close();
      resolve(exit ?? { code: null });
    };
    const exitName = path.basename(files.exit);
    try {
      watcher = watch(files.dir, (_, name) => {
        if (name === exitName) check();
      });
      watcher.on("error", () => watcher?.close());
    } catch {
      // No watch (out of inotify watches): the poll alone sees the end.
    }
    const poll = () => {
      check();
      if (!settled) timer = setTimeout(poll, pollMs);
    };
    poll();
  });
  return { pid, pidStart, ended };
}
