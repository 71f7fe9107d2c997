import { closeSync, realpathSync, type Stats } from "node:fs";
import path from "node:path";
import type { DirListing, FileRead } from "@corral/shared";
import { type AppConfig, expandHome } from "../config.js";
import { badInput, notFound, ServiceError } from "../lib/errors.js";
import { isInside, selfAndAncestors } from "../lib/paths.js";
import { type OpenWorkdir, Refusal, withWorkdir } from "../lib/confined-files.js";
import { readWindow } from "../lib/regular-file.js";
import type { FileWatcher } from "../jobs/file-watcher.js";
import { listDir } from "./dir-listing.js";
import type { RunnerRequestKind } from "../db/schema.js";
import type { RunnerWorkdirs } from "./on-runners.js";
import type { RawAnswer } from "./runner-answers.js";

/** A workdir that can be browsed, with the agents that use it and how many jobs ran there. */
export interface KnownWorkdir {
  path: string;
  agents: string[];
  jobs: number;
  /** When the newest job there was added (ms); null when only agents name it. */
  lastJobAt: number | null;
  /** The name of the runner whose machine holds it; absent: this machine. */
  runner?: string;
}

function realOrNull(p: string): string | null {
  try {
    return realpathSync(p);
  } catch {
    return null;
  }
}

/**
 * One answer for a path that does not exist and for one outside the known workdirs (or that a
 * link leads out of), so the file API tells nothing about what exists beyond them.
 */
const notInWorkdirs = (requested: string) =>
  notFound(`${requested} was not found in the workdirs of known jobs and agents (only those can be browsed)`, "path");

export interface WorkdirDeps {
  config: AppConfig;
  agents: { list(): Promise<{ name: string; workdir: string }[]> };
  files: Pick<FileWatcher, "jobWorkdirs">;
  /**
   * The server with its registry in PostgreSQL: workdirs whose newest job ran on a runner are on
   * that runner's machine, and only that runner is asked about paths inside them. A runner's own
   * WorkdirService has none: it answers from its disk.
   */
  runners?: RunnerWorkdirs;
}

/** A file's bytes to send: an open file on this machine, or the window of them a runner sent. */
export type FileBytes = { local: { real: string; fd: number; stat: Stats } } | { remote: RawAnswer };

/**
 * The workdir access policy, for every door: only the workdirs of known jobs and agents that lie
 * under the allowed roots can be listed and read, each path checked once its links are resolved,
 * then opened from its workdir's descriptor a component at a time without following a link
 * (lib/confined-files.ts), and files without blocking on a FIFO (lib/regular-file.ts).
 */
export class WorkdirService {
  constructor(private readonly deps: WorkdirDeps) {}

  /** A runner stored its answer to browsing request `id` (the server heard its NOTIFY). */
  answered(id: string): void {
    this.deps.runners?.answered(id);
  }

  /** The directories that may be browsed, with the agents and job counts that use them: this machine's as real paths, and those on runners. */
  async known(): Promise<KnownWorkdir[]> {
    const newest = new Map((await this.deps.files.jobWorkdirs()).map((w) => [w.workdir, w.lastJobAt]));
    const remote = await this.onRunners(newest);
    const local = (await this.localKnown()).filter((w) => !remote.some((r) => r.path === w.path));
    return [...local, ...remote].sort((a, b) => a.path.localeCompare(b.path));
  }

  /** The workdirs on this machine's disk (real paths) under its allowed roots. */
  private async localKnown(): Promise<KnownWorkdir[]> {
    const { config, agents, files } = this.deps;
    const roots = config.workdirRoots.map(realOrNull).filter((r): r is string => r !== null);
    const byPath = new Map<string, KnownWorkdir>();
    const add = (requested: string, agent: string | null, jobs: number, lastJobAt: number | null) => {
      const real = realOrNull(path.resolve(expandHome(requested, config.homeDir)));
      if (!real || !roots.some((root) => isInside(real, root))) return;
      const entry = byPath.get(real) ?? { path: real, agents: [], jobs: 0, lastJobAt: null };
      if (agent) entry.agents.push(agent);
      entry.jobs += jobs;
      // Several stored spellings (a link, `~`) can name one directory: its newest job is the newest of theirs.
      if (lastJobAt !== null && (entry.lastJobAt === null || lastJobAt > entry.lastJobAt)) entry.lastJobAt = lastJobAt;
      byPath.set(real, entry);
    };
    for (const agent of await agents.list()) add(agent.workdir, agent.name, 0, null);
    for (const { workdir, jobs, lastJobAt } of await files.jobWorkdirs()) add(workdir, null, jobs, lastJobAt);
    return [...byPath.values()];
  }

  /** The workdirs on runners' machines, each with the runner's name and the agents whose workdir it is. */
  private async onRunners(newest: Map<string, number>): Promise<KnownWorkdir[]> {
    const { runners, agents, config } = this.deps;
    if (!runners) return [];
    const remote = await runners.list();
    if (!remote.length) return [];
    const agentRows = await agents.list();
    return remote.map(({ path: workdir, runnerName, jobs }) => ({
      path: workdir,
      agents: agentRows.filter((a) => path.resolve(expandHome(a.workdir, config.homeDir)) === workdir).map((a) => a.name),
      jobs,
      lastJobAt: newest.get(workdir) ?? null,
      runner: runnerName,
    }));
  }

  /** A directory's entries. */
  async list(requested: string): Promise<DirListing> {
    const remote = await this.remote(requested);
    if (remote) return remote.ask("list");
    return this.onResolvedPath(requested, (wd, real) => listDir(wd, real));
  }

  /**
   * A window of a file for display: its text, or only the facts when it is binary. `offset` may be
   * the file's size (an empty window at its end), not past it: a reader going on from the last
   * window's end learns the file shrank rather than reading nothing.
   */
  async read(requested: string, offset: number, limit: number): Promise<FileRead> {
    const remote = await this.remote(requested);
    if (remote) return remote.ask("read", { readOffset: offset, readLimit: limit });
    return this.onResolvedPath(requested, (wd, real) => {
      const file = wd.openFile(real);
      try {
        if (offset > file.stat.size) {
          throw badInput(
            `the offset ${offset} is past the end of ${requested} (${file.stat.size} bytes); give an offset from 0 to ${file.stat.size}`,
            "offset",
          );
        }
        return readWindow(file, real, offset, limit);
      } finally {
        closeSync(file.fd);
      }
    });
  }

  /** A file's bytes for the raw route: opened here, or the part `range` asks for sent by the runner holding it. */
  async bytes(requested: string, range: string | undefined): Promise<FileBytes> {
    const remote = await this.remote(requested);
    if (remote) return { remote: await remote.ask("raw", { range: range ?? null }) };
    return { local: await this.open(requested) };
  }

  /** When `requested` lies in a workdir on a runner's machine: how to ask that runner about it. Decided before any disk is read. */
  private async remote(requested: string) {
    const { runners } = this.deps;
    const workdir = await runners?.holding(requested);
    if (!runners || !workdir) return null;
    return {
      ask: <K extends Exclude<RunnerRequestKind, "worktree">>(kind: K, more?: Parameters<RunnerWorkdirs["ask"]>[3]) =>
        runners.ask(workdir, kind, requested, more),
    };
  }

  /** A regular file opened for reading; the caller closes `fd`. */
  open(requested: string): Promise<{ real: string; fd: number; stat: Stats }> {
    return this.onResolvedPath(requested, (wd, real) => {
      const { fd, stat } = wd.openFile(real);
      return { real, fd, stat };
    });
  }

  /**
   * The real path of `requested`, if it lies inside a known workdir once every symlink is
   * resolved. The schema already refused `..` and NUL bytes; realpath takes care of links that point out.
   */
  private async resolve(requested: string): Promise<{ real: string; workdir: string }> {
    const expanded = expandHome(requested, this.deps.config.homeDir);
    if (!path.isAbsolute(expanded)) throw badInput(`${requested} is not an absolute path; give the full path (~ allowed)`, "path");
    let real: string;
    try {
      real = realpathSync(expanded);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENAMETOOLONG") throw badInput("the path or one of its names is too long for this system", "path");
      throw notInWorkdirs(requested);
    }
    // Only this machine's: a link here leading into a copy of a runner's workdir reads nothing of it.
    // A workdir holding `real` is `real` or above it: only those are asked for, not every workdir's jobs.
    const remote = new Set((await this.deps.runners?.list(selfAndAncestors(real)))?.map((r) => r.path));
    const workdir = (await this.localKnown()).find((w) => !remote.has(w.path) && isInside(real, w.path));
    if (!workdir) throw notInWorkdirs(requested);
    return { real, workdir: workdir.path };
  }

  /**
   * Runs `use` on the real path of `requested` with its workdir open. A file that vanished or was
   * swapped for a link since it was resolved answers as if it had never been there; the rest say
   * why it cannot be read.
   */
  private async onResolvedPath<T>(requested: string, use: (wd: OpenWorkdir, real: string) => T): Promise<T> {
    const { real, workdir } = await this.resolve(requested);
    try {
      return withWorkdir(workdir, (wd) => use(wd, real));
    } catch (err) {
      if (err instanceof Refusal) throw notInWorkdirs(requested);
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP") throw notInWorkdirs(requested);
      if (code === "EACCES" || code === "EPERM") throw new ServiceError(`${requested} cannot be read: permission denied`, 403, "path");
      if (code === "ENXIO") throw badInput(`${requested} is a socket; only files can be read`, "path");
      throw err;
    }
  }
}
