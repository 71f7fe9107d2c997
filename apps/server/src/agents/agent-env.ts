import { ServiceError } from "../lib/errors.js";

/**
 * Variables that make a program load or run code named by their value, in the worker or in
 * anything it starts — and in what Corral runs outside the sandbox with the same environment
 * (the wrapper shell, bubblewrap itself): the dynamic linker (`LD_*`, macOS `DYLD_*`), glibc's
 * iconv modules, Node, Bun, shells, Python, Perl, Ruby and the JVM; git's settings from the
 * environment (`GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n` set `core.fsmonitor`, a hook run by every
 * `git status`) and the programs git starts (ssh, askpass, editor, pager, external diff, its
 * own commands, a new repository's hooks); npm's settings (`script-shell`, `node-options`,
 * another `.npmrc`); places dotfiles that run code are read from (`HOME`: .bashrc, .gitconfig,
 * .npmrc, Python's user site; `XDG_CONFIG_HOME`: git's config; `ZDOTDIR`: .zshenv); Python's
 * user site, warning categories (imported) and breakpoint hook; less's input filters; the browser
 * a CLI opens to sign in. Whoever can edit an agent could otherwise turn any worker into their
 * own code. `PATH` and `SHELL` are not here: they are how a worker finds and runs its programs,
 * and choosing which binary runs is already what an agent's `command` does.
 */
const LOADER_PREFIXES = ["LD_", "DYLD_", "GIT_CONFIG", "npm_config_"];
const LOADER_NAMES = new Set([
  "GCONV_PATH",
  "NODE_OPTIONS",
  "NODE_PATH",
  "BUN_OPTIONS",
  "BASH_ENV",
  "ENV",
  "SHELLOPTS",
  "BASHOPTS",
  "PROMPT_COMMAND",
  "ZDOTDIR",
  "HOME",
  "XDG_CONFIG_HOME",
  "PYTHONPATH",
  "PYTHONHOME",
  "PYTHONSTARTUP",
  "PYTHONUSERBASE",
  "PYTHONWARNINGS",
  "PYTHONBREAKPOINT",
  "PERL5OPT",
  "PERL5LIB",
  "PERLLIB",
  "PERL5DB",
  "RUBYOPT",
  "RUBYLIB",
  "JAVA_TOOL_OPTIONS",
  "JDK_JAVA_OPTIONS",
  "_JAVA_OPTIONS",
  "GIT_SSH",
  "GIT_SSH_COMMAND",
  "GIT_ASKPASS",
  "SSH_ASKPASS",
  "GIT_EXEC_PATH",
  "GIT_TEMPLATE_DIR",
  "GIT_EXTERNAL_DIFF",
  "GIT_PROXY_COMMAND",
  "GIT_EDITOR",
  "GIT_SEQUENCE_EDITOR",
  "GIT_PAGER",
  "EDITOR",
  "VISUAL",
  "PAGER",
  "MANPAGER",
  "LESSOPEN",
  "LESSCLOSE",
  "BROWSER",
]);

/** Corral's own settings: never an agent's, whatever CORRAL_ALLOW_LOADER_ENV says (agents/inherited-env.ts never passes them). */
const CORRAL_PREFIX = "CORRAL_";

/** The setting that lets an agent's `env` hold loader variables anyway. */
export const ALLOW_LOADER_ENV_SETTING = "CORRAL_ALLOW_LOADER_ENV";

export function isLoaderVariable(name: string): boolean {
  // npm reads its settings whatever their case (NPM_CONFIG_SCRIPT_SHELL too).
  const lower = name.toLowerCase();
  return LOADER_NAMES.has(name) || LOADER_PREFIXES.some((prefix) => name.startsWith(prefix) || lower.startsWith(prefix));
}

/** The first variable of an agent's `env` it may not set: Corral's own, or a loader variable unless the server allows them. */
export function refusedLoaderVariable(env: Record<string, string>, allowLoaderEnv: boolean): string | null {
  const names = Object.keys(env);
  return names.find((name) => name.startsWith(CORRAL_PREFIX)) ?? (allowLoaderEnv ? undefined : names.find(isLoaderVariable)) ?? null;
}

const reason = (name: string) =>
  name.startsWith(CORRAL_PREFIX)
    ? `${name} is one of Corral's own settings, which never reach a worker; name the variable your program reads differently`
    : `${name} makes programs load or run code it names, so an agent's env may not set it (set ${ALLOW_LOADER_ENV_SETTING}=1 on the server to allow it)`;

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
