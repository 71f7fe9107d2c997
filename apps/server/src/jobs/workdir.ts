import { mkdirSync, realpathSync } from "node:fs";
import path from "node:path";
import { expandHome } from "../config.js";
import { badInput } from "../lib/errors.js";

export function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

function realRoots(roots: string[]): string[] {
  return roots.flatMap((root) => {
    try {
      return [realpathSync(root)];
    } catch {
      return [];
    }
  });
}

/** `p` with its longest existing prefix replaced by that prefix's real path. */
function realpathOfPlanned(p: string): string {
  for (let dir = p; ; dir = path.dirname(dir)) {
    try {
      return path.join(realpathSync(dir), path.relative(dir, p));
    } catch {
      if (dir === path.dirname(dir)) return p;
    }
  }
}

/**
 * A job's workdir: `~` expanded, created if missing, and inside one of the allowed roots once
 * symlinks are resolved — checked before anything is created and again after.
 */
export function resolveWorkdir(requested: string, roots: string[], homeDir: string, field = "workdir"): string {
  const absolute = path.resolve(expandHome(requested, homeDir));
  const allowed = realRoots(roots);
  const refuse = () =>
    badInput(
      `${requested} is outside the allowed workdir roots (${roots.join(", ")}); choose a directory under one of them or add its root to CORRAL_WORKDIR_ROOTS`,
      field,
    );
  if (!allowed.some((root) => isInside(realpathOfPlanned(absolute), root))) throw refuse();
  mkdirSync(absolute, { recursive: true });
  const real = realpathSync(absolute);
  if (!allowed.some((root) => isInside(real, root))) throw refuse();
  return real;
}
