// What a worker's environment is made of, whatever its kind: the server's basics it inherits and
// the agent's own env on top. agents/worker-env.ts adds what a CLI's kind declares; an API agent's
// bash command gets only this.
import type { AppConfig } from "../config.js";
import type { AgentRow } from "../db/schema.js";

/**
 * What every worker gets of the server's environment, whatever its kind: what programs need to
 * run on this machine (where things are, who the user is, the locale and terminal, temporary
 * files), to reach the network the way the machine does (proxies, extra CA certificates), and
 * the XDG dirs. No secret belongs here: a key, a socket that acts as the user (SSH_AUTH_SOCK,
 * DBUS_SESSION_BUS_ADDRESS) or Corral's own settings (never: config.serverEnv holds no CORRAL_*).
 * Names, or prefixes ending in `*`.
 */
const BASICS = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LANGUAGE",
  "LC_*",
  "TZ",
  "TERM",
  "COLORTERM",
  "NO_COLOR",
  "TMPDIR",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "ALL_PROXY",
  "NO_PROXY",
  "http_proxy",
  "https_proxy",
  "all_proxy",
  "no_proxy",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "NODE_EXTRA_CA_CERTS",
  "REQUESTS_CA_BUNDLE",
  "CURL_CA_BUNDLE",
  "XDG_*",
];

/** Whether a variable's name is one of `patterns` (names, or prefixes ending in `*`). */
export function matchesEnvPattern(name: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => (p.endsWith("*") ? name.startsWith(p.slice(0, -1)) : name === p));
}

/** The server's variables named by `patterns` and by CORRAL_PASS_ENV, over the basics. */
export function inheritedEnv(config: AppConfig, patterns: readonly string[]): Record<string, string> {
  const wanted = [...BASICS, ...patterns, ...config.passEnv];
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(config.serverEnv)) if (matchesEnvPattern(name, wanted)) env[name] = value;
  // Where the server's home is, even when it runs without HOME (a service): the sandbox binds it.
  env.HOME ??= config.homeDir;
  return env;
}

/** The agent's own `env` on top; a Corral setting in it never reaches a worker (agents/agent-env.ts refuses it). */
export function withAgentEnv(env: Record<string, string>, overrides: Record<string, string>): Record<string, string> {
  for (const [name, value] of Object.entries(overrides)) if (!name.startsWith("CORRAL_")) env[name] = value;
  return env;
}

/**
 * An API agent's `bash` command's: the basics, CORRAL_PASS_ENV and the agent's env, without its
 * API key, which only the server's own request to the model uses (agents/api/endpoint.ts).
 */
export function bashEnv(agent: AgentRow, config: AppConfig): Record<string, string> {
  const env = withAgentEnv(inheritedEnv(config, []), agent.env);
  if (agent.apiKeyEnv) delete env[agent.apiKeyEnv];
  return env;
}
