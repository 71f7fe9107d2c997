import { realpathSync, type Stats } from "node:fs";
import path from "node:path";
import type { DirListing, FileRead } from "@corral/shared";
import { type AppConfig, expandHome } from "../config.js";
import type { AgentService } from "../agents/service.js";
import { badInput, notFound, ServiceError } from "../lib/errors.js";
import { isInside } from "../lib/paths.js";
import { openRegularFile, readWindow } from "../lib/regular-file.js";
import type { FileWatcher } from "../jobs/file-watcher.js";
import { listDir } from "./dir-listing.js";

/** A workdir that can be browsed, with the agents that use it and how many jobs ran there. */
export interface KnownWorkdir {
  path: string;
  agents: string[];
  jobs: number;
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
  agents: Pick<AgentService, "list">;
  files: Pick<FileWatcher, "jobWorkdirs">;
}

/**
 * The workdir access policy, for every door: only the workdirs of known jobs and agents that lie
 * under the allowed roots can be listed and read, each path checked once its links are resolved,
 * and files are read without following a link or blocking on a FIFO (lib/regular-file.ts).
 */
export class WorkdirService {
  constructor(private readonly deps: WorkdirDeps) {}

  /** The directories that may be browsed, as real paths, with the agents and job counts that use them. */
  async known(): Promise<KnownWorkdir[]> {
    const { config, agents, files } = this.deps;
    const roots = config.workdirRoots.map(realOrNull).filter((r): r is string => r !== null);
    const byPath = new Map<string, KnownWorkdir>();
    const add = (requested: string, agent: string | null, jobs: number) => {
      const real = realOrNull(path.resolve(expandHome(requested, config.homeDir)));
      if (!real || !roots.some((root) => isInside(real, root))) return;
      const entry = byPath.get(real) ?? { path: real, agents: [], jobs: 0 };
      if (agent) entry.agents.push(agent);
      entry.jobs += jobs;
      byPath.set(real, entry);
    };
    for (const agent of await agents.list()) add(agent.workdir, agent.name, 0);
    for (const { workdir, jobs } of await files.jobWorkdirs()) add(workdir, null, jobs);
    return [...byPath.values()].sort((a, b) => a.path.localeCompare(b.path));
  }

  /** A directory's entries. */
  list(requested: string): Promise<DirListing> {
    return this.onResolvedPath(requested, listDir);
  }

  /** A window of a file for display: its text, or only the facts when it is binary. */
  read(requested: string, offset: number, limit: number): Promise<FileRead> {
    return this.onResolvedPath(requested, (real) => readWindow(real, offset, limit));
  }

  /** A regular file opened for reading; the caller closes `fd`. */
  open(requested: string): Promise<{ real: string; fd: number; stat: Stats }> {
    return this.onResolvedPath(requested, (real) => ({ real, ...openRegularFile(real) }));
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
    const workdir = (await this.known()).find((w) => isInside(real, w.path));
    if (!workdir) throw notInWorkdirs(requested);
    return { real, workdir: workdir.path };
  }

  /**
   * Runs `use` on the real path of `requested`. A file that vanished or was swapped for a link
   * since it was resolved answers as if it had never been there; the rest say why it cannot be read.
   */
  private async onResolvedPath<T>(requested: string, use: (real: string) => T): Promise<T> {
    const { real } = await this.resolve(requested);
    try {
      return use(real);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP") throw notInWorkdirs(requested);
      if (code === "EACCES" || code === "EPERM") throw new ServiceError(`${requested} cannot be read: permission denied`, 403, "path");
      if (code === "ENXIO") throw badInput(`${requested} is a socket; only files can be read`, "path");
      throw err;
    }
  }
}
