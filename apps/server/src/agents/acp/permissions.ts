import { realpathSync } from "node:fs";
import path from "node:path";
import type { AcpPermissions } from "@corral/shared";
import { isInside } from "../../lib/paths.js";

/** What an ACP agent asks permission for, as `session/request_permission` describes it. */
export interface PermissionAsk {
  kind?: string | null;
  title?: string | null;
  locations?: readonly { path: string }[] | null;
}

export interface PermissionOptionLike {
  optionId: string;
  kind: string;
}

export interface PermissionDecision {
  allowed: boolean;
  /** The option answered, or null when the agent offered none of that sense (then the request is cancelled). */
  optionId: string | null;
  /** Why, for the job's output. */
  reason: string;
}

/** Tool kinds that touch only the files they name: allowed under `workdir` when all of those are inside it. */
const FILE_KINDS = new Set(["read", "edit", "delete", "move", "search"]);

/**
 * The agent's policy applied to one request. Under `workdir`, a file kind (read, edit, delete,
 * move, search) is allowed when every file it names is inside the workdir, its real path too (a
 * link out is outside); `think` is allowed; anything else (running a command, fetching, a tool
 * that names no file) is denied.
 */
export function decidePermission(
  policy: AcpPermissions,
  workdir: string,
  ask: PermissionAsk,
  options: readonly PermissionOptionLike[],
): PermissionDecision {
  const verdict = judge(policy, workdir, ask);
  // Never "always": one file inside the workdir must not let the agent stop asking for the tool
  // for the rest of the session, its follow-ups included.
  const wanted = verdict.allowed ? ["allow_once"] : ["reject_once", "reject_always"];
  const option = wanted.map((kind) => options.find((o) => o.kind === kind)).find((o) => o !== undefined);
  if (verdict.allowed && !option) {
    return {
      allowed: false,
      optionId: null,
      reason: "the agent offers no way to allow it once, and Corral never allows a tool for the whole session",
    };
  }
  return { ...verdict, optionId: option?.optionId ?? null };
}

function judge(policy: AcpPermissions, workdir: string, ask: PermissionAsk): { allowed: boolean; reason: string } {
  if (policy === "allow") return { allowed: true, reason: "the agent's permissions are allow" };
  if (policy === "deny") return { allowed: false, reason: "the agent's permissions are deny" };
  const kind = ask.kind ?? "other";
  if (kind === "think") return { allowed: true, reason: "thinking touches nothing" };
  if (!FILE_KINDS.has(kind)) return { allowed: false, reason: `${kind} tools are not confined to the workdir (permissions: workdir)` };
  const paths = (ask.locations ?? []).map((l) => l.path);
  if (paths.length === 0) return { allowed: false, reason: `the ${kind} tool names no file, so it cannot be confined to the workdir` };
  const outside = paths.find((p) => !insideReally(workdir, p));
  if (outside !== undefined) return { allowed: false, reason: `${outside} is outside the workdir` };
  return { allowed: true, reason: "inside the workdir" };
}

/** `p` is absolute and inside `workdir`, as written and as the file system resolves its nearest existing ancestor. */
function insideReally(workdir: string, p: string): boolean {
  if (!path.isAbsolute(p) || p.includes("\0")) return false;
  const root = realOrSelf(workdir);
  const wanted = path.resolve(p);
  if (!isInside(wanted, path.resolve(workdir)) && !isInside(wanted, root)) return false;
  // The deepest part that exists, resolved: a link inside the workdir that points out is outside.
  let existing = wanted;
  for (;;) {
    try {
      return isInside(realpathSync(existing), root);
    } catch {
      const parent = path.dirname(existing);
      if (parent === existing) return false;
      existing = parent;
    }
  }
}

function realOrSelf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}
