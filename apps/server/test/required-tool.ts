import { spawnSync } from "node:child_process";
import { findExecutable } from "../src/lib/find-executable.js";

/**
 * Whether tests that need `command` can run here. Where it is missing (or cannot work) they are
 * skipped with a printed reason, so `pnpm test` passes on a fresh machine; with
 * CORRAL_REQUIRE_TOOLS=1 (CI, which installs every tool) a missing tool fails the run instead.
 */
export function hasTool(command: string, probeArgs: string[], install: string): boolean {
  const found = findExecutable(command, process.env.PATH);
  const probe = found && spawnSync(found, probeArgs, { encoding: "utf8", timeout: 10_000 });
  const why = !found
    ? "not installed"
    : probe && probe.status !== 0
      ? `installed but not working: ${(probe.stderr || probe.error?.message || `exit status ${probe.status}`).trim()}`
      : null;
  if (!why) return true;
  return unavailable(`${command} is ${why} (${install})`);
}

/** Tests that need something other than a program (a mount, say) that is missing here: skipped, saying why, or failed under CORRAL_REQUIRE_TOOLS=1. */
export function unavailable(message: string): false {
  if (process.env.CORRAL_REQUIRE_TOOLS === "1") throw new Error(`CORRAL_REQUIRE_TOOLS=1 and ${message}`);
  console.log(`skipped: ${message}`);
  return false;
}

/** Whether bubblewrap is installed and can build a sandbox here (user namespaces allowed). */
export const hasBwrap = (): boolean =>
  hasTool("bwrap", ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--", "true"], "apt-get install bubblewrap");
