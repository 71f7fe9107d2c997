import type { AgentAvailability } from "@corral/shared";
import type { AppConfig } from "../config.js";
import type { AgentRow } from "../db/schema.js";
import { findExecutable } from "../lib/find-executable.js";
import { loaderRefusal, refusedLoaderVariable } from "./agent-env.js";
import { kindRequires } from "./kind-descriptors.js";
import { cliAdapterFor } from "./kind-lookup.js";
import { cliVersion } from "./cli-version.js";
import { probeEnv } from "./worker-env.js";

/** Where a CLI agent's binary is expected: the agent's command, `CORRAL_<AGENT>_BIN`, else the CLI's name. */
export function binaryName(agent: AgentRow, config: AppConfig): string {
  const adapter = cliAdapterFor(agent.kind);
  return agent.command ?? config.binOverrides[agent.name] ?? adapter?.defaultBinary ?? agent.name;
}

/** Where a CLI agent's binary is; its version is only asked for listings (see cliAvailabilityWithVersion). */
export type CliLocation = Omit<AgentAvailability, "version">;

/**
 * Checked when asked (listing, job start), never cached: users install CLIs while Corral runs.
 * An agent stored with a loader variable in its `env` (before Corral refused them, or while
 * `CORRAL_ALLOW_LOADER_ENV` was set) is unavailable, so its jobs fail with why instead of running.
 */
export function cliAvailability(agent: AgentRow, config: AppConfig): CliLocation {
  const refused = refusedLoaderVariable(agent.env, config.allowLoaderEnv);
  if (refused) return { available: false, resolved: null, hint: loaderRefusal(refused) };
  const adapter = cliAdapterFor(agent.kind);
  const name = binaryName(agent, config);
  const pathVar = agent.env.PATH ?? config.serverEnv.PATH;
  const resolved = findExecutable(name, pathVar);
  if (resolved) return { available: true, resolved, hint: null };
  const setting = `CORRAL_${agent.name.toUpperCase()}_BIN`;
  const known = adapter?.knownCommand?.(agent);
  const hint = known
    ? `${name} was not found on PATH; ${known.installHint}, or set the agent's command to its absolute path`
    : kindRequires(agent.kind, "command")
      ? `${name} was not found on PATH; set the agent's command to an executable or an absolute path`
      : `${name} was not found on PATH; ${adapter?.installHint ?? "install it (see its documentation)"}, or set ${setting} to its path`;
  return { available: false, resolved: null, hint };
}

/**
 * Availability with the CLI's version, asked with its kind's `versionArgs` (or, for a program an
 * acp agent names that Corral knows, that program's). Others are not asked: a command agent can
 * be any executable, and running it with an argument it does not expect could do real work.
 * The probe gets a worker's environment of its kind (agents/worker-env.ts), not the agent's `env`: listing agents must not run
 * code that whoever edited an agent chose (its `env` reaches the CLI only when a job runs).
 */
export async function cliAvailabilityWithVersion(agent: AgentRow, config: AppConfig): Promise<AgentAvailability> {
  const location = cliAvailability(agent, config);
  const adapter = cliAdapterFor(agent.kind);
  const known = adapter?.knownCommand?.(agent);
  const versionArgs = known ? known.versionArgs : adapter?.versionArgs;
  // The probe runs outside any sandbox, so only a binary the server's own PATH finds (or the agent
  // names by its path) is run: the agent's PATH may name a folder its workers write.
  const probed = location.resolved !== null && findExecutable(binaryName(agent, config), config.serverEnv.PATH) === location.resolved;
  const version = versionArgs && probed && location.resolved ? await cliVersion(location.resolved, versionArgs, probeEnv(agent.kind, config)) : null;
  return { ...location, version };
}
