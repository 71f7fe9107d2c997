import type { HubServer } from "@corral/shared";
import { type AppConfig, isLoopbackHost } from "../config.js";
import type { HubAgentRow } from "../db/schema.js";
import { OpencodeCallError, OpencodeClient, type ServerAddress } from "../agents/opencode-server/client.js";
import { badInput, ServiceError } from "../lib/errors.js";

/** The registration's check of its server must answer quickly, as an agent's availability check does. */
const CHECK_TIMEOUT_MS = 5_000;

/** OpenCode's basic-auth user when the server sets none of its own (OPENCODE_SERVER_USERNAME). */
const OPENCODE_USER = "opencode";

/** A registrant's own server as the registry keeps it with its registration. */
export interface LiveTarget {
  url: string;
  /** The OpenCode session messages go into; null: the server's latest. */
  session: string | null;
  password: string | null;
}

/** The target a registration row carries while it lives, or undefined: its messages wait in its inbox. */
export function targetOf(row: Pick<HubAgentRow, "targetUrl" | "targetSession" | "targetPassword">): LiveTarget | undefined {
  return row.targetUrl ? { url: row.targetUrl, session: row.targetSession, password: row.targetPassword } : undefined;
}

/** How Corral signs in to the target: OpenCode's basic auth, when it has a password. */
export const addressOf = (target: LiveTarget): ServerAddress => ({
  baseUrl: target.url,
  authorization: target.password ? `Basic ${Buffer.from(`${OPENCODE_USER}:${target.password}`).toString("base64")}` : undefined,
});

/**
 * The address a registration gives, as a base URL. Any client with the token chooses it, and
 * Corral's server then sends requests there (with the password, and each message's text). So only
 * this machine is taken, http or https on a loopback address (the same test as CORRAL_HOST's,
 * config.ts): a window registers its own server, which listens on 127.0.0.1 by default. Anything
 * else would let an MCP client point Corral at the hosts of its network (internal services, cloud
 * metadata at 169.254.169.254); an OpenCode server on another machine is the owner's to add as an
 * `opencode_server` agent. Corral's own port is refused: it is no OpenCode.
 */
export function targetUrl(server: Pick<HubServer, "url" | "port">, config: Pick<AppConfig, "port">): string {
  const field = server.port === undefined ? "server.url" : "server.port";
  const given = server.port === undefined ? (server.url ?? "") : `http://127.0.0.1:${server.port}`;
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw badInput(`${given} is not a URL; give the address opencode serve prints (http://127.0.0.1:<port>), or its port`, field);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw badInput(`the server's URL must be http or https, not ${url.protocol}`, field);
  if (!isLoopbackHost(url.hostname)) {
    throw badInput(
      `${url.hostname} is not this machine: a registration's server must listen on a loopback address (127.0.0.1, ::1, localhost); ` +
        "an OpenCode server elsewhere is added as an opencode_server agent",
      field,
    );
  }
  if (url.username || url.password) throw badInput("the URL cannot carry a user or password; pass the password as server.password", field);
  if (url.pathname !== "/" || url.search || url.hash)
    throw badInput("give the server's address alone (http://127.0.0.1:<port>), without a path or query", field);
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  if (port < 1) throw badInput("port 0 is no server's; give the port your OpenCode server listens on", field);
  // A Corral given port 0 does not know its port here; its guard refuses OpenCode's health check all the same.
  if (port === config.port) throw badInput(`port ${port} is Corral's own; give the port your OpenCode server listens on`, field);
  return url.origin;
}

/**
 * The registration's server, checked as an `opencode_server` agent's availability is: it answers
 * OpenCode's health check with the password given, and has the session named. Each refusal names
 * the field and what to do.
 */
export async function checkTarget(server: HubServer, config: Pick<AppConfig, "port">): Promise<LiveTarget> {
  const target: LiveTarget = { url: targetUrl(server, config), session: server.session ?? null, password: server.password ?? null };
  const field = server.port === undefined ? "server.url" : "server.port";
  const client = new OpencodeClient(addressOf(target));
  const signal = AbortSignal.timeout(CHECK_TIMEOUT_MS);
  const fix = server.port === undefined ? "pass the address it printed" : "pass the port it printed";
  try {
    if ((await client.health(signal)) === "unknown") {
      throw badInput(`${target.url} answered, but not as OpenCode does (GET /global/health has no version); ${fix}`, field);
    }
    if (target.session) await client.session(target.session, signal);
  } catch (err) {
    if (err instanceof ServiceError) throw err;
    if (!(err instanceof OpencodeCallError)) {
      if (err instanceof Error && err.name === "TimeoutError") throw badInput(`OpenCode at ${target.url} did not answer in time; ${fix}`, field);
      // A body that is not JSON, a redirect: something else listens there.
      throw badInput(`${target.url} answered, but not as OpenCode does; ${fix}`, field);
    }
    if (err.status === null) {
      throw badInput(
        `OpenCode is not reachable at ${target.url}; start it with \`opencode serve --port ${new URL(target.url).port || "<port>"}\`, or ${fix}`,
        field,
      );
    }
    if (err.status === 401) {
      const why = target.password ? "refused the password given" : "asks for a password";
      throw badInput(`OpenCode at ${target.url} ${why}: pass its OPENCODE_SERVER_PASSWORD as server.password`, "server.password");
    }
    if (err.status === 404 && target.session) {
      throw badInput(
        `OpenCode at ${target.url} has no session ${target.session}; name one of its sessions, or leave session out for its latest`,
        "server.session",
      );
    }
    // Not the body: whatever listens there is not the caller's to read through Corral.
    throw badInput(`${target.url} answered ${err.status}, not as OpenCode does; ${fix}`, field);
  }
  return target;
}
