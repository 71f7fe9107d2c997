import { ServiceError } from "../lib/errors.js";

/**
 * Variables that make a program load or run code named by their value, in the worker or in
 * anything it starts: the dynamic linker (`LD_*`, macOS `DYLD_*`), glibc's iconv modules, Node,
 * Bun, shells, Python, Perl, Ruby and the JVM. Whoever can edit an agent could otherwise turn any
 * worker (the CLI, or the `node` running it) into their own code. `PATH` is not here: an agent
 * may need it, and choosing which binary runs is already what its `command` does.
 */
const LOADER_PREFIXES = ["LD_", "DYLD_"];
const LOADER_NAMES = new Set([
  "GCONV_PATH",
  "NODE_OPTIONS",
  "NODE_PATH",
  "BUN_OPTIONS",
  "BASH_ENV",
  "ENV",
  "SHELLOPTS",
  "BASHOPTS",
  "PYTHONPATH",
  "PYTHONHOME",
  "PYTHONSTARTUP",
  "PERL5OPT",
  "PERL5LIB",
  "PERLLIB",
  "PERL5DB",
  "RUBYOPT",
  "RUBYLIB",
  "JAVA_TOOL_OPTIONS",
  "JDK_JAVA_OPTIONS",
  "_JAVA_OPTIONS",
]);

/** The setting that lets an agent's `env` hold loader variables anyway. */
export const ALLOW_LOADER_ENV_SETTING = "CORRAL_ALLOW_LOADER_ENV";

export function isLoaderVariable(name: string): boolean {
  return LOADER_NAMES.has(name) || LOADER_PREFIXES.some((prefix) => name.startsWith(prefix));
}

/** The first loader variable of an agent's `env`, unless the server allows them. */
export function refusedLoaderVariable(env: Record<string, string>, allowLoaderEnv: boolean): string | null {
  if (allowLoaderEnv) return null;
  return Object.keys(env).find(isLoaderVariable) ?? null;
}

const reason = (name: string) =>
  `${name} makes programs load code it names, so an agent's env may not set it (set ${ALLOW_LOADER_ENV_SETTING}=1 on the server to allow it)`;

/** Why an agent with that variable cannot run, as a job's error and the agent's availability hint. */
export function loaderRefusal(name: string): string {
  return `env.${name}: ${reason(name)}`;
}

/** Refuses an agent's `env` that sets a loader variable: a 400 naming `env.<NAME>`, shaped as a schema issue so the panel shows it at the field. */
export function assertAgentEnv(env: Record<string, string> | undefined, allowLoaderEnv: boolean): void {
  const refused = env ? refusedLoaderVariable(env, allowLoaderEnv) : null;
  if (!refused) return;
  const field = `env.${refused}`;
  throw new ServiceError(loaderRefusal(refused), 400, field, [{ field, message: reason(refused) }]);
}
