import type { ApiError } from "@corral/shared";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { AppConfig } from "../config.js";
import type { BrowserSessionRow } from "../db/schema.js";
import { accessOf, collectRoutes, type RouteEntry } from "./access.js";
import { FailedAuthLimiter } from "./rate-limit.js";
import type { SessionService } from "./sessions.js";
import { tokenMatcher } from "./token.js";

/** The cookie earlier versions kept the master token in; it is cleared wherever it still shows up. */
const LEGACY_TOKEN_COOKIE = "corral_token";
const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "::1"];
/** Host header values whose verdict is kept; past it the cache starts over (any value a client sends is bounded). */
const HOST_VERDICTS_MAX = 256;
/** A redirect target we build must be a plain local path: no scheme, no `//host`, no controls. */
const SAFE_LOCAL_PATH = /^\/(?![/\\])[\x21-\x7e]*$/;

declare module "fastify" {
  interface FastifyRequest {
    /** The panel session this request came in with; null for the token or no credentials. */
    browserSession: BrowserSessionRow | null;
  }
}

/** The `Host` names Corral answers to: loopback, the address it listens on, CORRAL_ALLOWED_HOSTS. */
export function allowedHostNames(config: AppConfig): string[] {
  const names = [...LOOPBACK_NAMES, ...config.allowedHosts];
  if (!["0.0.0.0", "::"].includes(config.host)) names.push(config.host);
  return names.map((h) => h.toLowerCase());
}

function hostnameOf(hostHeader: string): string {
  try {
    return new URL(`http://${hostHeader}`).hostname.replace(/^\[|\]$/g, "");
  } catch {
    return "";
  }
}

/**
 * Every value sent under `name`. Read by hand (@fastify/cookie keeps one value per name) because
 * another local page can plant a second cookie of the same name to shadow the real one.
 */
function cookieValues(header: string | undefined, name: string): string[] {
  const values: string[] = [];
  for (const part of header?.split(";") ?? []) {
    const eq = part.indexOf("=");
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    values.push(part.slice(eq + 1).trim());
  }
  return values;
}

type Verdict = { ok: true; session: BrowserSessionRow | null } | { ok: false; status: 401; error: string; wrongToken: boolean };

const missing: Verdict = {
  ok: false,
  status: 401,
  wrongToken: false,
  error:
    "missing token: send Authorization: Bearer <token> (printed at startup, kept in the data dir's token file), or open the panel URL printed at startup",
};
const wrongToken: Verdict = {
  ok: false,
  status: 401,
  wrongToken: true,
  error: "wrong token: use the token printed at startup (kept in the data dir's token file)",
};
const staleSession: Verdict = {
  ok: false,
  status: 401,
  wrongToken: false,
  error: "this browser's session has expired or was signed out: open the panel URL printed at startup (it ends in ?token=…) to sign in again",
};

export interface Guard {
  limiter: FailedAuthLimiter;
  /** Every route and the access it declared (complete once the app is ready). */
  routes(): RouteEntry[];
}

/**
 * The security floor, on every request — WebSocket upgrades included, since @fastify/websocket
 * runs onRequest hooks before it upgrades. A Host we answer to (DNS rebinding) and no foreign
 * Origin (cross-site requests) everywhere; then what the matched route declared (access.ts):
 * credentials unless it is public or a panel page. Credentials are the token as a Bearer header
 * (every client), or a browser session cookie — only on same-origin requests, so an origin
 * allowed by CORRAL_ALLOWED_ORIGINS must send the token itself. Wrong tokens are counted per
 * remote address; past the limit more wrong ones get 429, while the right one always gets in.
 */
export function registerGuard(app: FastifyInstance, config: AppConfig, token: string, sessions: SessionService): Guard {
  const limiter = new FailedAuthLimiter(config.authFailureLimit, config.authFailureWindowMs);
  const routes = collectRoutes(app);
  const allowedHosts = new Set(allowedHostNames(config));
  const isToken = tokenMatcher(token);
  // Parsing a Host value takes a URL parse per request; clients send the same few values.
  const hostVerdicts = new Map<string, boolean>();
  const hostAllowed = (host: string) => {
    let allowed = hostVerdicts.get(host);
    if (allowed === undefined) {
      allowed = allowedHosts.has(hostnameOf(host).toLowerCase());
      if (hostVerdicts.size >= HOST_VERDICTS_MAX) hostVerdicts.clear();
      hostVerdicts.set(host, allowed);
    }
    return allowed;
  };
  app.decorateRequest("browserSession", null);

  const refuse = (reply: FastifyReply, status: 401 | 403, error: string) =>
    reply.code(status).send({ error, code: status === 401 ? "unauthorized" : "forbidden" } satisfies ApiError);
  // RFC 6750: a client (an MCP client above all) learns from the challenge that a Bearer token is
  // wanted; `invalid_token` only when one was sent. No `resource_metadata`: there is no OAuth here.
  const challenge = (reply: FastifyReply, wrong: boolean) =>
    reply.header("www-authenticate", wrong ? 'Bearer realm="corral", error="invalid_token"' : 'Bearer realm="corral"');
  const tooMany = (reply: FastifyReply, retryAfterS: number) =>
    reply
      .code(429)
      .header("retry-after", String(retryAfterS))
      .send({
        error: `too many wrong tokens from this address; try again in ${retryAfterS} s, or use the right token (CORRAL_AUTH_FAILURE_LIMIT per CORRAL_AUTH_FAILURE_WINDOW_S)`,
        code: "rate_limited",
      } satisfies ApiError);

  /** Whether the browser says this request comes from Corral's own pages. */
  const fromOwnPage = (request: FastifyRequest, sameOrigin: boolean) => {
    const site = request.headers["sec-fetch-site"];
    return sameOrigin && (site === undefined || site === "same-origin" || site === "none");
  };

  const authenticate = async (request: FastifyRequest, reply: FastifyReply, sameOrigin: boolean): Promise<Verdict> => {
    const auth = request.headers.authorization;
    if (auth !== undefined) {
      // The scheme is case-insensitive (RFC 9110), the token is not.
      const given = /^bearer\s+(\S+)\s*$/i.exec(auth)?.[1];
      return given && isToken(given) ? { ok: true, session: null } : wrongToken;
    }
    const secrets = fromOwnPage(request, sameOrigin) ? cookieValues(request.headers.cookie, sessions.cookieName) : [];
    for (const secret of secrets) {
      const found = await sessions.verify(secret);
      if (!found) continue;
      // The browser keeps the cookie as long as the session now lasts.
      if (found.renewed) reply.setCookie(sessions.cookieName, secret, sessions.cookieOptions());
      return { ok: true, session: found.session };
    }
    return secrets.length ? staleSession : missing;
  };

  /** `?token=` on a page URL: a new session for this browser, and the URL again without the token. */
  const exchange = async (request: FastifyRequest, reply: FastifyReply) => {
    const query = request.url.indexOf("?");
    if (request.method !== "GET" || query < 0) return;
    const params = new URLSearchParams(request.url.slice(query + 1));
    const given = params.get("token");
    if (!given) return;
    if (!isToken(given)) {
      const wait = limiter.retryAfterS(request.ip);
      if (wait) return tooMany(reply, wait);
      limiter.recordFailure(request.ip);
      return; // The page loads and says how to sign in.
    }
    const { secret } = await sessions.create(String(request.headers["user-agent"] ?? ""));
    params.delete("token");
    const rest = params.toString();
    const path = request.url.slice(0, query);
    const location = `${SAFE_LOCAL_PATH.test(path) ? path : "/"}${rest ? `?${rest}` : ""}`;
    reply.setCookie(sessions.cookieName, secret, sessions.cookieOptions());
    reply.header("cache-control", "no-store");
    return reply.redirect(location, 302);
  };

  app.addHook("onRequest", async (request, reply) => {
    const host = request.headers.host ?? "";
    if (!hostAllowed(host)) {
      return refuse(reply, 403, `Host "${host}" is not allowed; open Corral through localhost or add the name to CORRAL_ALLOWED_HOSTS`);
    }
    const origin = request.headers.origin;
    const sameOrigin = !origin || origin === `http://${host}` || origin === `https://${host}`;
    if (!sameOrigin && !config.allowedOrigins.includes(origin)) {
      return refuse(reply, 403, `Origin "${origin}" is not allowed; add it to CORRAL_ALLOWED_ORIGINS to permit it`);
    }
    if (cookieValues(request.headers.cookie, LEGACY_TOKEN_COOKIE).length) reply.clearCookie(LEGACY_TOKEN_COOKIE, { path: "/" });

    const access = accessOf(request);
    if (access === "public") return;
    if (access === "page") return exchange(request, reply);
    const verdict = await authenticate(request, reply, sameOrigin);
    if (verdict.ok) {
      request.browserSession = verdict.session;
      return;
    }
    if (verdict.wrongToken) {
      const wait = limiter.retryAfterS(request.ip);
      if (wait) return tooMany(reply, wait);
      limiter.recordFailure(request.ip);
    }
    return refuse(challenge(reply, verdict.wrongToken), verdict.status, verdict.error);
  });
  return { limiter, routes };
}
