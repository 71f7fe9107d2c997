import { realpathSync } from "node:fs";
import path from "node:path";
import { expandHome } from "../../config.js";
import { isInside } from "../../lib/paths.js";
import { badInput, notFound, ServiceError } from "../../lib/errors.js";
import type { Services } from "../../services.js";

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
 * The directories that may be browsed: the workdirs of known jobs and agents that exist and lie
 * under the allowed roots, all as real paths.
 */
export function knownWorkdirs(services: Services): KnownWorkdir[] {
  const { config } = services;
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
  for (const agent of services.agents.list()) add(agent.workdir, agent.name, 0);
  for (const { workdir, jobs } of services.files.jobWorkdirs()) add(workdir, null, jobs);
  return [...byPath.values()].sort((a, b) => a.path.localeCompare(b.path));
}

/**
 * One answer for a path that does not exist and for one outside the known workdirs (or that a
 * link leads out of), so the file API tells nothing about what exists beyond them.
 */
const notInWorkdirs = (requested: string) =>
  notFound(`${requested} was not found in the workdirs of known jobs and agents (only those can be browsed)`, "path");

/**
 * The real path of `requested`, if it lies inside a known workdir once every symlink is
 * resolved. The schema already refused `..` and NUL bytes; realpath takes care of links that point out.
 */
export function resolveInWorkdir(services: Services, requested: string): { real: string; workdir: string } {
  const expanded = expandHome(requested, services.config.homeDir);
  if (!path.isAbsolute(expanded)) throw badInput(`${requested} is not an absolute path; give the full path (~ allowed)`, "path");
  let real: string;
  try {
    real = realpathSync(expanded);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENAMETOOLONG") throw badInput("the path or one of its names is too long for this system", "path");
    throw notInWorkdirs(requested);
  }
  const workdir = knownWorkdirs(services).find((w) => isInside(real, w.path));
  if (!workdir) throw notInWorkdirs(requested);
  return { real, workdir: workdir.path };
}

/**
 * Runs `use` on the real path of `requested`. A file that vanished or was swapped for a link
 * since it was resolved answers as if it had never been there; the rest say why it cannot be read.
 */
export function onResolvedPath<T>(services: Services, requested: string, use: (real: string) => T): T {
  const { real } = resolveInWorkdir(services, requested);
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
