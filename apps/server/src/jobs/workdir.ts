import { mkdirSync, realpathSync } from "node:fs";
import path from "node:path";
import { expandHome, type AppConfig } from "../config.js";
import { badInput } from "../lib/errors.js";
import { isInside } from "../lib/paths.js";

/** One realpath(3) call; the JS version lstats each component of the path (this runs at every launch and start). */
const realpath = realpathSync.native;

function realRoots(roots: string[]): string[] {
  return roots.flatMap((root) => {
    try {
      return [realpath(root)];
    } catch {
      return [];
    }
  });
}

/** `p` with its longest existing prefix replaced by that prefix's real path. */
function realpathOfPlanned(p: string): string {
  for (let dir = p; ; dir = path.dirname(dir)) {
    try {
      return path.join(realpath(dir), path.relative(dir, p));
    } catch {
      if (dir === path.dirname(dir)) return p;
    }
  }
}

/** Linux's PATH_MAX (with the terminating NUL) and NAME_MAX: longer paths cannot be opened at all. */
const MAX_PATH_BYTES = 4095;
const MAX_NAME_BYTES = 255;

/** Refuses, naming the field, what no file system call could take (instead of failing deep inside one). */
function assertPathShape(absolute: string, requested: string, field: string): void {
  if (absolute.includes("\0")) throw badInput(`${field} contains a NUL byte`, field);
  if (Buffer.byteLength(absolute) > MAX_PATH_BYTES) {
    throw badInput(`${field} is ${Buffer.byteLength(absolute)} bytes long once resolved; paths are limited to ${MAX_PATH_BYTES} bytes`, field);
  }
  const long = absolute.split(path.sep).find((name) => Buffer.byteLength(name) > MAX_NAME_BYTES);
  if (long !== undefined) {
    throw badInput(`${requested} has a name of ${Buffer.byteLength(long)} bytes; each part of a path is limited to ${MAX_NAME_BYTES} bytes`, field);
  }
}

/** What decides where jobs may run: the allowed roots, `~`, and Corral's own data dir (never). */
export type WorkdirPolicy = Pick<AppConfig, "workdirRoots" | "homeDir" | "dataDir">;

/**
 * A job's workdir: `~` expanded, created if missing, and inside one of the allowed roots once
 * symlinks are resolved — checked before anything is created and again after. Used at launch and
 * again each time the job starts, since a directory can become a link while the job waits.
 * Corral's data dir (token, registry, every job's output) is never part of a workdir, nor holds
 * one: workers and Corral's own file tools would otherwise write there.
 */
export function resolveWorkdir(requested: string, policy: WorkdirPolicy, field = "workdir"): string {
  const { workdirRoots: roots, homeDir } = policy;
  const absolute = path.resolve(expandHome(requested, homeDir));
  assertPathShape(absolute, requested, field);
  const allowed = realRoots(roots);
  const refuse = () =>
    badInput(
      `${requested} is outside the allowed workdir roots (${roots.join(", ")}); choose a directory under one of them or add its root to CORRAL_WORKDIR_ROOTS`,
      field,
    );
  const dataDir = realpathOfPlanned(path.resolve(policy.dataDir));
  const overlapsData = (p: string) => isInside(p, dataDir) || isInside(dataDir, p);
  const planned = realpathOfPlanned(absolute);
  const refuseData = () =>
    badInput(
      `${requested} ${isInside(dataDir, planned) ? "contains" : "is inside"} Corral's data dir (${policy.dataDir}); choose a project directory`,
      field,
    );
  if (!allowed.some((root) => isInside(planned, root))) throw refuse();
  if (overlapsData(planned)) throw refuseData();
  let real: string;
  try {
    mkdirSync(absolute, { recursive: true });
    real = realpath(absolute);
  } catch (err) {
    // A file in the way, a parent without write permission, a link loop: the caller can fix the path.
    const code = (err as NodeJS.ErrnoException).code ?? "error";
    throw badInput(`${requested} cannot be used as a workdir (${code}: ${err instanceof Error ? err.message : String(err)})`, field);
  }
  if (!allowed.some((root) => isInside(real, root))) throw refuse();
  if (overlapsData(real)) throw refuseData();
  return real;
}
