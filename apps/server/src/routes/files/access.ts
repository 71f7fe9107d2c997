import { realpathSync } from "node:fs";
import path from "node:path";
import { expandHome } from "../../config.js";
import { isInside } from "../../jobs/workdir.js";
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
 * The real path of `requested`, if it lies inside a known workdir once every symlink is
 * resolved. The schema already refused `..`; realpath takes care of links that point out.
 */
export function resolveInWorkdir(services: Services, requested: string): { real: string; workdir: string } {
  const expanded = expandHome(requested, services.config.homeDir);
  if (!path.isAbsolute(expanded)) throw badInput(`${requested} is not an absolute path; give the full path (~ allowed)`, "path");
  let real: string;
  try {
    real = realpathSync(expanded);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") throw notFound(`${requested} does not exist`, "path");
    throw new ServiceError(`${requested} cannot be opened (${code ?? "error"})`, 403, "path");
  }
  const workdir = knownWorkdirs(services).find((w) => isInside(real, w.path));
  if (!workdir) {
    throw new ServiceError(
      `${requested} is outside the workdirs of known jobs and agents${real !== expanded ? ` (it resolves to ${real})` : ""}; only those can be browsed`,
      403,
      "path",
    );
  }
  return { real, workdir: workdir.path };
}
