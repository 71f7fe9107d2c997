import { EventEmitter } from "node:events";
import { existsSync, lstatSync, readFileSync, realpathSync, rmSync, writeFileSync, type Stats } from "node:fs";
import path from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { FileChange, JobFile, JobFileCounts, JobFiles } from "@corral/shared";
import { watch, type FSWatcher } from "chokidar";
import type { JobFilesRepo } from "../db/registry.js";
import { at, OpenWorkdir, walkEntries } from "../lib/confined-files.js";
import { PRIVATE_FILE_MODE } from "../lib/private-files.js";
import { isInside } from "../lib/paths.js";

/** Directories whose churn says nothing about the task (and can hold huge trees). */
const SKIPPED_DIRS = new Set([".git", "node_modules"]);
/** Bursts of writes are stored and announced together, at most this often per job. */
const COALESCE_MS = 150;
/**
 * Chokidar starts watching a job's workdir this long after its worker started (then catches up
 * with a walk). Setting up a watch costs more than a short job: one that is over by then is not
 * watched at all, and the comparison at its end reports everything it did.
 */
export const WATCH_DELAY_MS = 250;
/** Above this many files a workdir is not tracked: snapshots and watches would cost too much. */
export const MAX_TRACKED_FILES = 50_000;
/**
 * A job's file list stops at this many paths: past it the list is cut (once, with a mark the
 * doors show) and the job is no longer watched, so memory, rows and events stay bounded however
 * many files a worker makes.
 */
export const MAX_JOB_FILES = 10_000;
/**
 * A snapshot walks in slices this long, giving the event loop a turn between them: a big workdir
 * then delays its own job's start, never other requests.
 */
const SLICE_MS = 8;
/** File rows stored in one transaction; a bigger batch is stored in several. */
const ROWS_PER_WRITE = 500;
/** Entries handled between looks at the clock. */
const ENTRIES_PER_CLOCK_CHECK = 64;

interface FileStat {
  size: number;
  mtimeMs: number;
  ino: number;
}

export interface Snapshot {
  files: Map<string, FileStat>;
  /** False when the walk stopped at MAX_TRACKED_FILES. */
  complete: boolean;
}

export interface FileEvent {
  jobId: string;
  file: JobFile;
}

export interface FileWatcherEvents {
  /** A path's change was stored (and differs from what was stored before). */
  file: [FileEvent];
}

const toRelative = (root: string, p: string) => path.relative(root, p).split(path.sep).join("/");

function fileStat(st: Stats): FileStat | undefined {
  // Only files and links count; a directory or a FIFO in a file's place means the file is gone.
  return st.isFile() || st.isSymbolicLink() ? { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino } : undefined;
}

function statOf(file: string): FileStat | undefined {
  try {
    return fileStat(lstatSync(file));
  } catch {
    return undefined;
  }
}

/** Deeper directories are not tracked: the walk holds one descriptor per level. */
const MAX_DEPTH = 256;

/**
 * Every file under `root` (links not followed; .git, node_modules and `excluded` dirs skipped).
 * Each directory is opened from its parent's descriptor (lib/confined-files.ts), so one a worker
 * swaps for a link mid-walk is skipped, never listed. Synchronous calls in short slices rather
 * than one async call per file: a walk of 50 000 files stays about as fast as in one go, and
 * other requests are served between the slices.
 */
export async function snapshotDir(root: string, excluded: string[] = [], limit = MAX_TRACKED_FILES): Promise<Snapshot> {
  const files = new Map<string, FileStat>();
  let sliceStart = performance.now();
  let handled = 0;
  const pause = async () => {
    if (++handled % ENTRIES_PER_CLOCK_CHECK !== 0 || performance.now() - sliceStart < SLICE_MS) return;
    await nextTurn();
    sliceStart = performance.now();
  };
  // Directories count too: a worker's million empty directories (or one directory of a million
  // entries, read in one synchronous call) would otherwise be walked to the end, holding no file.
  const budget = { left: limit * 2 };
  let wd: OpenWorkdir;
  try {
    wd = OpenWorkdir.open(root);
  } catch {
    return { files, complete: true }; // vanished, or no longer the directory it was: it has no files we can report
  }
  try {
    const limits = {
      budget,
      maxDepth: MAX_DEPTH,
      skipDir: (rel: string, name: string) => SKIPPED_DIRS.has(name) || excluded.includes(path.join(root, rel)),
    };
    for (const { rel, dirFd, name } of walkEntries(wd.fd, "", limits)) {
      await pause();
      const st = statOf(at(dirFd, name));
      if (!st) continue;
      if (files.size >= limit) return { files, complete: false };
      files.set(rel, st);
    }
  } finally {
    wd.close();
  }
  return { files, complete: budget.left >= 0 };
}

/**
 * The before-snapshot on disk, so a job picked up after a restart is still compared with it. An
 * empty workdir's is no file at all (see loadSnapshot): one file less to create for such a job.
 * It is taken once, before a job's first attempt: a retry is compared with it too.
 */
function saveSnapshot(file: string, snapshot: Snapshot): void {
  if (snapshot.complete && snapshot.files.size === 0) {
    if (existsSync(file)) rmSync(file, { force: true });
    return;
  }
  const rows = [...snapshot.files].map(([rel, st]) => [rel, st.size, st.mtimeMs, st.ino]);
  writeFileSync(file, JSON.stringify({ complete: snapshot.complete, files: rows }), { mode: PRIVATE_FILE_MODE });
}

/**
 * The snapshot saved before a job's worker started. None on disk means the workdir was empty: a
 * worker starts only once its snapshot is saved, and begin() saves an empty one as no file.
 */
function loadSnapshot(file: string): Snapshot | null {
  try {
    const saved = JSON.parse(readFileSync(file, "utf8")) as { complete: boolean; files: [string, number, number, number][] };
    return { complete: saved.complete, files: new Map(saved.files.map(([rel, size, mtimeMs, ino]) => [rel, { size, mtimeMs, ino }])) };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { complete: true, files: new Map() };
    return null;
  }
}

const sameFile = (a: FileStat, b: FileStat) => a.size === b.size && a.mtimeMs === b.mtimeMs && a.ino === b.ino;

/**
 * What the job did to a path: its net change from before the job to now. A file the job made and
 * removed again is `gone` — not a change of the workdir, and only seen when the watcher caught
 * it, so reporting it would make the answer depend on timing.
 */
function changeOf(before: FileStat | undefined, now: FileStat | undefined): FileChange | "gone" | null {
  if (!before) return now ? "created" : "gone";
  if (!now) return "deleted";
  return sameFile(before, now) ? null : "modified";
}

interface Tracker {
  jobId: string;
  workdir: string;
  before: Snapshot;
  watcher: FSWatcher | null;
  /** Until the watcher starts (see WATCH_DELAY_MS). */
  watchTimer: NodeJS.Timeout | null;
  /** Paths the watcher saw change since the last flush. */
  pending: Set<string>;
  /** A walk of the workdir is under way; it stores what the watcher sees meanwhile (see `compare`). */
  comparing: boolean;
  timer: NodeJS.Timeout | null;
  /** What is stored for each path. */
  stored: Map<string, { change: FileChange; size: number | null }>;
  /** The list reached MAX_JOB_FILES: nothing more is watched, compared or stored. */
  cut: boolean;
  /** The writes of its changes, one after another: the job's end waits for the last. */
  writes: Promise<void>;
}

/**
 * Tracks what each running job does to its workdir: a snapshot before the worker starts, chokidar
 * while it runs (for live events, once it has run WATCH_DELAY_MS), and a second snapshot when it
 * ends so nothing the watcher missed is lost. Changes are stored before they are announced.
 */
export class FileWatcher extends EventEmitter<FileWatcherEvents> {
  private trackers = new Map<string, Tracker>();
  /** Set at shutdown: a walk still under way stores nothing and starts no watcher. */
  private closed = false;
  /** Corral's own directories (the data dir), never reported even inside a workdir. */
  private readonly excluded: string[];

  constructor(
    private readonly repo: JobFilesRepo,
    excluded: string[] = [],
  ) {
    super();
    this.setMaxListeners(0);
    this.excluded = excluded.map((dir) => {
      try {
        return realpathSync(dir);
      } catch {
        return path.resolve(dir);
      }
    });
  }

  /**
   * Before the worker starts: remember the workdir as it is (in memory, and in `snapshotFile` for
   * a restart); it is watched once the job has run WATCH_DELAY_MS. A `retry` is compared with
   * the snapshot taken before the job's first attempt, and keeps what the earlier ones changed:
   * a file an earlier attempt created is still one the job created, not one it modified.
   */
  async begin(jobId: string, workdir: string, snapshotFile: string, retry = false): Promise<void> {
    const first = retry ? loadSnapshot(snapshotFile) : null;
    const before = first ?? (await snapshotDir(workdir, this.excludedIn(workdir)));
    if (this.closed) return;
    if (!first) saveSnapshot(snapshotFile, before);
    const stored: Tracker["stored"] = first
      ? new Map((await this.repo.list(jobId)).map((f) => [f.path, { change: f.change, size: f.size }]))
      : new Map();
    if (this.closed) return;
    const tracker = this.track(jobId, workdir, before, stored);
    if (!before.complete) return;
    tracker.watchTimer = setTimeout(() => {
      tracker.watchTimer = null;
      this.watch(tracker, () => void this.compare(tracker, () => this.trackers.get(jobId) === tracker));
    }, WATCH_DELAY_MS);
  }

  /**
   * A job picked up after a restart: compare with the snapshot taken before it started, and
   * with what was stored, so changes made while the server was down are reported too.
   */
  async resume(jobId: string, workdir: string, snapshotFile: string): Promise<void> {
    const before = loadSnapshot(snapshotFile);
    if (!before) return;
    const stored = new Map((await this.repo.list(jobId)).map((f) => [f.path, { change: f.change, size: f.size }]));
    const cut = (await this.repo.cutAt(jobId)) !== null;
    // What changed while the server was down is stored and announced now, not only at the end;
    // if the job ends first, its end compares everything itself.
    const tracker = this.track(jobId, workdir, before, stored);
    tracker.cut = cut;
    if (cut) return;
    if (before.complete) this.watch(tracker);
    await this.compare(tracker, () => this.trackers.get(jobId) === tracker);
  }

  private excludedIn(workdir: string): string[] {
    return this.excluded.filter((dir) => isInside(dir, workdir));
  }

  private track(jobId: string, workdir: string, before: Snapshot, stored: Tracker["stored"]): Tracker {
    void this.end(jobId, false);
    const tracker: Tracker = {
      jobId,
      workdir,
      before,
      watcher: null,
      watchTimer: null,
      pending: new Set(),
      comparing: false,
      timer: null,
      stored,
      cut: false,
      writes: Promise.resolve(),
    };
    this.trackers.set(jobId, tracker);
    return tracker;
  }

  /**
   * Live events from chokidar. `ready` runs once its first scan is done: what changed before then
   * raised no event, so a walk (started from there) reports it.
   */
  private watch(tracker: Tracker, ready?: () => void): void {
    if (this.trackers.get(tracker.jobId) !== tracker) return;
    const { workdir } = tracker;
    const excluded = this.excludedIn(workdir);
    const watcher = watch(workdir, {
      ignoreInitial: true,
      followSymlinks: false,
      ignored: (p) => SKIPPED_DIRS.has(path.basename(p)) || excluded.some((dir) => isInside(p, dir)),
    });
    const seen = (p: string) => this.saw(tracker, p);
    watcher.on("add", seen).on("change", seen).on("unlink", seen);
    watcher.on("unlinkDir", (dir) => {
      // Files under a removed directory may not each get an event.
      const prefix = `${toRelative(workdir, dir)}/`;
      for (const rel of [...tracker.before.files.keys(), ...tracker.stored.keys()]) {
        if (rel.startsWith(prefix)) this.saw(tracker, path.join(workdir, rel));
      }
    });
    // A watcher that fails (e.g. out of inotify watches) leaves the end snapshot to report changes.
    watcher.on("error", () => void this.closeWatcher(tracker));
    if (ready) watcher.once("ready", ready);
    tracker.watcher = watcher;
  }

  /**
   * After the worker ended, before its final status is stored: compare the workdir with the
   * snapshot and store every change, so a caller told the job ended sees all its files.
   * `diff` false drops the tracker without looking (the server is shutting down, or the worker
   * never started).
   */
  async end(jobId: string, diff = true): Promise<void> {
    const tracker = this.trackers.get(jobId);
    if (!tracker) return;
    this.trackers.delete(jobId);
    this.closeWatcher(tracker);
    if (diff) await this.compare(tracker, () => true);
    await tracker.writes;
  }

  /**
   * Compares the workdir now with the before-snapshot and stores every change, unless `wanted`
   * says no by the time the walk is done. The watcher may still run meanwhile (after a restart):
   * what it reports is held back and read again at the end of the walk, since the walk may have
   * passed that path before it changed.
   */
  private async compare(tracker: Tracker, wanted: () => boolean): Promise<void> {
    if (!tracker.before.complete || tracker.cut) return;
    tracker.comparing = true;
    try {
      const after = await snapshotDir(tracker.workdir, this.excludedIn(tracker.workdir));
      if (this.closed || !wanted() || tracker.cut) return;
      if (!after.complete) {
        this.flush(tracker);
        return;
      }
      const seen = new Set(tracker.pending);
      tracker.pending.clear();
      const paths = new Set([...tracker.before.files.keys(), ...after.files.keys(), ...seen, ...tracker.stored.keys()]);
      await this.record(
        tracker,
        [...paths].map((rel) => ({ rel, now: seen.has(rel) ? statOf(path.join(tracker.workdir, rel)) : after.files.get(rel) })),
      );
    } catch {
      // The workdir vanished or became unreadable: what was stored so far stands.
    } finally {
      tracker.comparing = false;
    }
  }

  /** Stops every watcher without diffing (the server is shutting down; workers go on). */
  shutdown(): void {
    this.closed = true;
    for (const jobId of [...this.trackers.keys()]) void this.end(jobId, false);
  }

  async list(jobId: string): Promise<JobFile[]> {
    return (await this.repo.list(jobId)).map(({ path: p, change, size, at }) => ({ path: p, change, size, at }));
  }

  /** A job's files, and where the list was cut when more changed than it holds (see MAX_JOB_FILES). */
  async listed(jobId: string): Promise<JobFiles> {
    const [files, cutAt] = await Promise.all([this.list(jobId), this.repo.cutAt(jobId)]);
    return { files, cutAt };
  }

  /**
   * Tells the file changes stored for a job that another process watched (a runner's), as this
   * process tells its own: the panel's job page and the WebSocket merge them by path.
   */
  async announceStored(jobId: string): Promise<void> {
    for (const file of await this.list(jobId)) this.emit("file", { jobId, file });
  }

  counts(jobIds: string[]): Promise<Map<string, JobFileCounts>> {
    return this.repo.counts(jobIds);
  }

  /** Every workdir a job has run in, with how many jobs ran there (for workdir browsing). */
  jobWorkdirs(): Promise<{ workdir: string; jobs: number; lastJobAt: number }[]> {
    return this.repo.jobWorkdirs();
  }

  private saw(tracker: Tracker, absolute: string): void {
    if (this.trackers.get(tracker.jobId) !== tracker || tracker.cut) return;
    tracker.pending.add(toRelative(tracker.workdir, absolute));
    // A burst larger than a whole list is stored now, not held: what is pending stays bounded too.
    if (tracker.pending.size >= MAX_JOB_FILES && !tracker.comparing) {
      if (tracker.timer) clearTimeout(tracker.timer);
      tracker.timer = null;
      this.flush(tracker);
      return;
    }
    tracker.timer ??= setTimeout(() => {
      tracker.timer = null;
      this.flush(tracker);
    }, COALESCE_MS);
  }

  private flush(tracker: Tracker): void {
    if (tracker.comparing) return; // the walk reads these paths when it is done
    const paths = [...tracker.pending];
    tracker.pending.clear();
    this.record(
      tracker,
      paths.map((rel) => ({ rel, now: statOf(path.join(tracker.workdir, rel)) })),
    ).catch(() => {
      // The registry cannot take them (closed at shutdown): the next start compares the workdir with what is stored.
    });
  }

  /**
   * Stores the changes that differ from what is stored, then announces them. Writes follow each
   * other in the order their changes were seen, so a later state is never overwritten by an earlier one.
   */
  private record(tracker: Tracker, states: { rel: string; now: FileStat | undefined }[]): Promise<void> {
    if (tracker.cut) return tracker.writes;
    const at = Date.now();
    const changed: JobFile[] = [];
    const gone: JobFile[] = [];
    for (const { rel, now } of states) {
      const change = changeOf(tracker.before.files.get(rel), now);
      if (!change) continue;
      if (change === "gone") {
        // Announced as created earlier: take it back, so live views match the stored list.
        if (tracker.stored.delete(rel)) gone.push({ path: rel, change: "deleted", size: null, at });
        continue;
      }
      const size = change === "deleted" ? null : (now?.size ?? null);
      const stored = tracker.stored.get(rel);
      if (stored && stored.change === change && stored.size === size) continue;
      if (!stored && tracker.stored.size >= MAX_JOB_FILES) {
        tracker.cut = true;
        continue;
      }
      tracker.stored.set(rel, { change, size });
      changed.push({ path: rel, change, size, at });
    }
    const cut = tracker.cut;
    if (cut) {
      // The rest of the job is not watched: chokidar's own memory of the tree stops growing too.
      this.closeWatcher(tracker);
      tracker.pending.clear();
    }
    if (!changed.length && !gone.length && !cut) return tracker.writes;
    const write = async () => {
      // In slices, each its own transaction, with a turn of the event loop between them: a burst of
      // thousands of files never holds other requests up for long.
      for (let i = 0; i < changed.length; i += ROWS_PER_WRITE) {
        if (i) await nextTurn();
        await this.repo.upsert(changed.slice(i, i + ROWS_PER_WRITE).map((f) => ({ jobId: tracker.jobId, ...f })));
      }
      await this.repo.remove(
        tracker.jobId,
        gone.map((f) => f.path),
      );
      if (cut) await this.repo.markCut(tracker.jobId, MAX_JOB_FILES, at);
      for (const file of [...changed, ...gone]) this.emit("file", { jobId: tracker.jobId, file });
    };
    const written = tracker.writes.then(write);
    tracker.writes = written.catch(() => undefined);
    return written;
  }

  private closeWatcher(tracker: Tracker): void {
    if (tracker.timer) clearTimeout(tracker.timer);
    tracker.timer = null;
    if (tracker.watchTimer) clearTimeout(tracker.watchTimer);
    tracker.watchTimer = null;
    const watcher = tracker.watcher;
    tracker.watcher = null;
    void watcher?.close().catch(() => {});
  }
}
