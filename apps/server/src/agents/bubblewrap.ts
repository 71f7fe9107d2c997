// Bubblewrap, whatever runs in it: a CLI worker of any kind (agents/sandbox.ts gives it its
// kind's state dirs) or an API agent's bash command. Nothing here looks a kind up.
import { spawnSync } from "node:child_process";
import { lstatSync, realpathSync } from "node:fs";
import path from "node:path";
import { findExecutable } from "../lib/find-executable.js";
import { installRoot } from "../lib/install-root.js";
import { seccompProgram, seccompUnsupported } from "./seccomp.js";
import type { Invocation } from "./types.js";
import type { AppConfig } from "../config.js";
import type { SandboxGit } from "../worktrees/sandbox-commits.js";

/**
 * The Node that runs Corral also runs the ACP client a worker starts; the sandbox replaces /tmp, so
 * a Node installed there (one unpacked from the npm registry, say) is bound back, read-only, alone.
 * Anywhere else it is already in sight: the system is read-only, home too.
 */
function nodeUnderTmp(): string[] {
  const nodeHome = path.dirname(path.dirname(realpathSync(process.execPath)));
  return nodeHome.startsWith("/tmp/") ? ["--ro-bind-try", nodeHome, nodeHome] : [];
}

/** Secrets a worker has no need to read: hidden (an empty tmpfs, or /dev/null for a file). */
const HIDDEN_IN_HOME = [".ssh", ".gnupg", ".password-store", ".netrc", ".docker/config.json", ".kube", ".git-credentials"];

const probed = new Set<string>();

/** The worker's fd that bubblewrap reads the seccomp program from (the spawner writes it there). */
const SECCOMP_FD = 3;

/** Throws with the reason when bubblewrap cannot build a sandbox on this machine (no user namespaces, seccomp…). */
function assertBwrapWorks(bwrap: string, agentName: string): void {
  if (probed.has(bwrap)) return;
  const unsupported = seccompUnsupported();
  if (unsupported) throw new Error(`agent ${agentName} has sandbox "bwrap", but ${unsupported}. The job was not run.`);
  // With the filter, read from stdin here, so a kernel that cannot load it fails the probe, not the job.
  const probe = spawnSync(bwrap, ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--seccomp", "0", "--", "true"], {
    encoding: "utf8",
    input: seccompProgram(),
    timeout: 10_000,
  });
  if (probe.status !== 0) {
    const why = (probe.stderr || probe.error?.message || `exit status ${probe.status}`).trim();
    throw new Error(
      `agent ${agentName} has sandbox "bwrap", but bubblewrap cannot create a sandbox here: ${why}. ` +
        "It needs unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or in a container: a seccomp/AppArmor profile that allows them). " +
        'The job was not run; set the agent\'s sandbox to "none" to run it unconfined.',
    );
  }
  probed.add(bwrap);
}

function kindOf(p: string): "dir" | "file" | null {
  try {
    return lstatSync(p).isDirectory() ? "dir" : "file";
  } catch {
    return null;
  }
}

/**
 * The bubblewrap arguments that confine a worker to its workdir (see docs/security.md, "Sandbox"), with
 * `stateDirs` (under home) writable: where a CLI keeps its tokens and sessions.
 */
export function bwrapArgs(
  workdir: string,
  homeDir: string,
  dataDir: string,
  stateDirs: readonly string[],
  binds: readonly (readonly [from: string, to: string])[] = [],
): string[] {
  const args = [
    "--die-with-parent",
    // Run by root, bubblewrap keeps every capability for the worker: CAP_SYS_ADMIN would remount the
    // read-only binds (the repository's .git, home) writable. Unprivileged, this changes nothing.
    "--cap-drop",
    "ALL",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    // The system, read-only; the network stays shared: CLIs talk to their providers' APIs.
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--tmpfs",
    "/tmp",
    // Home stays readable (CLIs and runtimes installed there), even when it lives under /tmp; so
    // does Corral's own install (the ACP client a worker runs, and the Node it may ship).
    "--ro-bind-try",
    homeDir,
    homeDir,
    "--ro-bind-try",
    installRoot,
    installRoot,
    ...nodeUnderTmp(),
    "--bind",
    workdir,
    workdir,
  ];
  // Home is read-only in the sandbox, but CLIs refresh tokens and write session files there.
  for (const rel of stateDirs) {
    const p = path.join(homeDir, rel);
    if (kindOf(p)) args.push("--bind", p, p);
  }
  // A worktree job's private git folder over its admin folder (worktrees/sandbox-commits.ts).
  for (const [from, to] of binds) args.push("--bind", from, to);
  // Hidden last: mounts apply in order, and a later bind of a parent (the workdir may be ~ itself;
  // opencode's state is ~/.local/share, where Corral's data dir lives by default) would uncover them.
  const hide = (p: string) => {
    const what = kindOf(p);
    if (what === "dir") args.push("--tmpfs", p);
    else if (what === "file") args.push("--ro-bind", "/dev/null", p);
  };
  for (const rel of HIDDEN_IN_HOME) hide(path.join(homeDir, rel));
  // Corral's own data: the token file, the registry and every job's output.
  hide(dataDir);
  args.push("--chdir", workdir);
  return args;
}

/**
 * `invocation` inside bubblewrap, never silently unconfined: throws with why when bubblewrap is
 * missing or cannot build a sandbox here. `invocation.cwd` is the workdir's real path. No Unix
 * socket of the host can be reached from inside (agents/seccomp.ts: its program on fd 3);
 * `offline` also takes the network away (an API agent's bash, whose web access is http_get's allowlist).
 * `git`: a worktree job's own git folder and variables (worktrees/sandbox-commits.ts).
 */
export function inBubblewrap(
  invocation: Invocation,
  agentName: string,
  config: AppConfig,
  { stateDirs = [], offline = false, git }: { stateDirs?: readonly string[]; offline?: boolean; git?: SandboxGit } = {},
): Invocation {
  // The server's PATH only: a directory on the agent's PATH may be one a sandboxed worker can
  // write, and a fake bwrap left there would run the next job unconfined.
  const bwrap = findExecutable("bwrap", config.serverEnv.PATH);
  if (!bwrap) {
    throw new Error(
      `agent ${agentName} has sandbox "bwrap", but bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap). ` +
        'The job was not run; install it or set the agent\'s sandbox to "none".',
    );
  }
  assertBwrapWorks(bwrap, agentName);
  return {
    ...invocation,
    command: bwrap,
    env: { ...invocation.env, ...git?.env },
    args: [
      ...bwrapArgs(invocation.cwd, config.homeDir, config.dataDir, stateDirs, git?.binds),
      ...(offline ? ["--unshare-net"] : []),
      "--seccomp",
      String(SECCOMP_FD),
      "--",
      invocation.command,
      ...invocation.args,
    ],
    fd3: seccompProgram(),
  };
}
