import { execFile } from "node:child_process";
import { realpathSync, statSync } from "node:fs";
import { stripAnsi } from "@corral/shared";

/** A CLI that has not answered `--version` by then is left without one; listings must stay quick. */
export const VERSION_TIMEOUT_MS = 3_000;
/** A version is one short line; anything past this is not worth reading. */
const MAX_OUTPUT_BYTES = 64 * 1024;
const MAX_VERSION_CHARS = 100;

const versionLike = /\d+\.\d+/;

/** The first line of `--version` output that carries a version number, trimmed and bounded. */
export function versionFromOutput(output: string): string | null {
  for (const raw of output.split(/\r?\n/)) {
    // Some CLIs colour their banner; the codes are no part of the version.
    const line = stripAnsi(raw).trim();
    if (versionLike.test(line)) return line.length > MAX_VERSION_CHARS ? `${line.slice(0, MAX_VERSION_CHARS - 1)}…` : line;
  }
  return null;
}

type Outcome = { version: string | null; timedOut: boolean };

function runVersion(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = execFile(
      file,
      args,
      { env, timeout: VERSION_TIMEOUT_MS, killSignal: "SIGKILL", maxBuffer: MAX_OUTPUT_BYTES, encoding: "utf8", windowsHide: true },
      (err, stdout, stderr) => {
        const timedOut = !!err && (err as NodeJS.ErrnoException & { killed?: boolean }).killed === true;
        // A CLI that exits non-zero after printing its version still told us; a killed one did not finish.
        resolve({ version: timedOut ? null : (versionFromOutput(stdout) ?? versionFromOutput(stderr)), timedOut });
      },
    );
    // Some CLIs read extra prompt input from stdin (codex does); end it so none waits for it.
    child.stdin?.end();
    child.stdin?.on("error", () => {});
  });
}

/** A CLI that timed out is asked again after this, not on every listing (each would wait the full timeout). */
const RETRY_AFTER_TIMEOUT_MS = 5 * 60_000;

/** One entry per binary: its identity when asked, and the answer (shared by concurrent listings). */
const cache = new Map<string, { stamp: string; version: Promise<string | null>; expires: number }>();

/**
 * The version a CLI reports, remembered per resolved binary and its modification time, so
 * listings run each binary once and an upgrade in place is noticed. A timeout is remembered
 * only for a while: a busy machine should not hide the version for good.
 */
export function cliVersion(resolved: string, args: string[], env: NodeJS.ProcessEnv): Promise<string | null> {
  let stamp: string;
  try {
    const real = realpathSync(resolved);
    stamp = `${real}:${statSync(real).mtimeMs}:${args.join(" ")}`;
  } catch {
    return Promise.resolve(null);
  }
  const hit = cache.get(resolved);
  if (hit && hit.stamp === stamp && hit.expires > Date.now()) return hit.version;
  const entry = { stamp, version: Promise.resolve<string | null>(null), expires: Number.POSITIVE_INFINITY };
  entry.version = runVersion(resolved, args, env).then((outcome) => {
    if (outcome.timedOut) entry.expires = Date.now() + RETRY_AFTER_TIMEOUT_MS;
    return outcome.version;
  });
  cache.set(resolved, entry);
  return entry.version;
}
