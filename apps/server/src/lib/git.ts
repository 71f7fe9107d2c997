import { type ChildProcessByStdio, spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import type { Readable } from "node:stream";

/**
 * Git as Corral runs it on a repository a worker may have written to. A repository's config can
 * name programs git runs on its own (`core.fsmonitor` on every status, hooks, clean and smudge
 * filters on add and checkout, textconv and external diffs, merge drivers, `core.sshCommand`, a
 * pager, an editor, a signing program): a worker that writes `.git/config` — or a file it
 * includes — would run code as the server. So every call:
 *
 * - reads no system or global config (the user's `~/.gitconfig` is writable by unsandboxed workers
 *   too) and gets a minimal environment, no `GIT_*` of the server's;
 * - overrides, after every config file (GIT_CONFIG_COUNT), each setting that runs a program: the
 *   fixed ones below, and each filter and merge driver the repository's config (includes
 *   followed) names; commands that show diffs get `--no-ext-diff --no-textconv`;
 * - never prompts, and is killed after a timeout.
 */

/** Settings that name a program git would run, switched off for every call. */
const FIXED_OVERRIDES = [
  "core.fsmonitor=false",
  "core.hooksPath=/dev/null",
  "core.sshCommand=false",
  "core.gitProxy=",
  "core.askPass=",
  "core.editor=false",
  "core.pager=cat",
  "core.alternateRefsCommand=",
  "credential.helper=",
  "diff.external=",
  "sequence.editor=false",
  "gpg.program=false",
  "gpg.ssh.program=false",
  "gpg.x509.program=false",
  "commit.gpgSign=false",
  "tag.gpgSign=false",
  "uploadpack.packObjectsHook=",
  // Corral never fetches: a partial clone's lazy fetch (of an object a worker deleted) would run
  // remote.<name>.uploadpack, a program of the repository's choosing.
  "protocol.allow=never",
  "protocol.file.allow=never",
  // A submodule has its own config, filters included, which the list below never reads: never recurse.
  "submodule.recurse=false",
  "diff.ignoreSubmodules=all",
  "status.submoduleSummary=false",
];

/** A filter's commands (`filter.<name>.clean`, …): off when empty. */
const FILTER_COMMAND = /^filter\.([\s\S]+)\.(clean|smudge|process)$/i;
/** A merge driver's command: an empty one would fail every merge, so it becomes git's own text merge. */
const MERGE_DRIVER = /^merge\.[\s\S]+\.driver$/i;
const TEXT_MERGE = "git merge-file --marker-size=%L %A %O %B";

/** Commands that show diffs: a diff driver's command or textconv is kept off by their flags (an empty one would be run). */
const DIFFING = new Set(["diff", "log", "show", "format-patch", "diff-tree", "diff-index", "diff-files"]);

export const GIT_TIMEOUT_MS = 30_000;
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

export class GitError extends Error {
  constructor(
    message: string,
    readonly code: number | null,
    readonly stderr: string,
    readonly stdout: string,
  ) {
    super(message);
  }
}

export interface GitResult {
  stdout: string;
  stderr: string;
  /** 0, or one of the `okCodes` asked for (null when git was stopped at `cutAt`). */
  code: number | null;
  /** Output went past `cutAt`: stdout holds its first `cutAt` bytes, and git was stopped. */
  cut: boolean;
}

export interface GitOptions {
  /** Extra variables (GIT_INDEX_FILE, GIT_DIR and GIT_WORK_TREE for a worktree whose `.git` file is not trusted, the committer). */
  env?: Record<string, string>;
  timeoutMs?: number;
  /** Exit codes that are answers, not failures (`git diff --quiet`'s 1). */
  okCodes?: number[];
  /** Keep this many bytes of stdout and stop git there, answering what came (a diff shown in part), where past 64 MB fails. */
  cutAt?: number;
  /** A file of Corral's git reads as its stdin (a list of objects, a pack); none: stdin is closed. */
  stdinFile?: string;
}

function baseEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: "/nonexistent",
    LANG: "C",
    LC_ALL: "C",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    GIT_OPTIONAL_LOCKS: "0",
    GIT_NO_REPLACE_OBJECTS: "1",
    GIT_NO_LAZY_FETCH: "1",
    ...extra,
  };
}

function run(cwd: string, args: string[], options: GitOptions): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    // Its own process group: a timeout ends the children git started too (a `reset` that
    // `worktree add` runs, blocked on a FIFO, would otherwise outlive it).
    const stdin = options.stdinFile === undefined ? "ignore" : openSync(options.stdinFile, "r");
    let child: ChildProcessByStdio<null, Readable, Readable>;
    try {
      // An fd is typed as "ignore" only to pick spawn's overload whose stdout and stderr are streams.
      child = spawn("git", args, { cwd, env: baseEnv(options.env), detached: true, stdio: [stdin as "ignore", "pipe", "pipe"], windowsHide: true });
    } finally {
      // The child holds its own copy.
      if (typeof stdin === "number") closeSync(stdin);
    }
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    let timedOut = false;
    let overflow = false;
    let cut = false;
    const stop = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // Gone already.
      }
    };
    const keep = (into: Buffer[]) => (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_OUTPUT_BYTES) {
        overflow = true;
        return stop();
      }
      into.push(chunk);
    };
    const cutAt = options.cutAt;
    if (cutAt === undefined) child.stdout.on("data", keep(out));
    else {
      let kept = 0;
      child.stdout.on("data", (chunk: Buffer) => {
        if (cut) return;
        out.push(chunk.subarray(0, cutAt - kept));
        kept += chunk.length;
        if (kept > cutAt) {
          cut = true;
          stop();
        }
      });
    }
    child.stderr.on("data", keep(err));
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, options.timeoutMs ?? GIT_TIMEOUT_MS);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(new GitError(`git: ${e.message}`, null, "", ""));
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out).toString("utf8");
      const stderr = Buffer.concat(err).toString("utf8");
      if (cut && !timedOut && !overflow) return resolve({ stdout, stderr, code, cut });
      if (!timedOut && !overflow && code !== null && (code === 0 || options.okCodes?.includes(code))) return resolve({ stdout, stderr, code, cut });
      // What git said: on stderr, or (a merge's conflicts) on stdout.
      const said = (stderr.trim() || stdout.trim()).split("\n").slice(-3).join("; ");
      const why = timedOut
        ? `did not finish in ${Math.round((options.timeoutMs ?? GIT_TIMEOUT_MS) / 1000)} s`
        : overflow
          ? `printed more than ${MAX_OUTPUT_BYTES} bytes`
          : said || `exit code ${code}`;
      reject(
        new GitError(
          `git ${args.find((a) => !a.startsWith("-")) ?? ""}: ${why.slice(0, 2000)}`,
          code,
          stderr.slice(-64 * 1024),
          stdout.slice(-64 * 1024),
        ),
      );
    });
  });
}

/**
 * Settings as GIT_CONFIG_COUNT/KEY/VALUE variables, which git applies after every config file:
 * a key is given apart from its value, so a driver named `a=b` is switched off too (`-c` would
 * split its name at the `=`).
 */
function asEnv(settings: [key: string, value: string][]): Record<string, string> {
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(settings.length) };
  settings.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}

const FIXED: [string, string][] = FIXED_OVERRIDES.map((setting) => {
  const at = setting.indexOf("=");
  return [setting.slice(0, at), setting.slice(at + 1)];
});

/** The overrides for a repository: the fixed ones, and an empty command for each driver its config names. */
async function overrides(cwd: string, options: GitOptions): Promise<Record<string, string>> {
  // Listing config runs nothing; it follows includes, as every other command will.
  const listed = await run(cwd, ["config", "--list", "--name-only", "-z"], {
    ...options,
    cutAt: undefined,
    env: { ...options.env, ...asEnv(FIXED) },
    okCodes: [0, 1, 128],
  });
  const drivers = new Map<string, string>();
  for (const key of listed.stdout.split("\0")) {
    const filter = FILTER_COMMAND.exec(key);
    if (filter) {
      drivers.set(key, "");
      drivers.set(`filter.${filter[1]}.required`, "false");
    } else if (MERGE_DRIVER.test(key)) drivers.set(key, TEXT_MERGE);
  }
  return asEnv([...FIXED, ...drivers]);
}

/**
 * Runs `git <args>` in `cwd` with the repository's program-running settings switched off. Args
 * are passed as they are, without a shell: callers put `--` before paths and refs users name.
 */
export async function git(cwd: string, args: string[], options: GitOptions = {}): Promise<GitResult> {
  const [command, ...rest] = args;
  const full = command !== undefined && DIFFING.has(command) ? [command, "--no-ext-diff", "--no-textconv", ...rest] : args;
  return run(cwd, full, { ...options, env: { ...options.env, ...(await overrides(cwd, options)) } });
}
