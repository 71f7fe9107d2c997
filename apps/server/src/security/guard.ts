import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { AppConfig } from "../config.js";
import { applyCors } from "./cors.js";
import { FailedAuthLimiter } from "./rate-limit.js";
import { tokensMatch } from "./token.js";

const TOKEN_COOKIE = "corral_token";
const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "::1"];
/** Everything but readiness and the panel's own files (which hold no data) needs the token. */
const isProtected = (url: string) => /^\/(api|mcp|metrics)(\/|\?|$)/.test(url) && !/^\/api\/health(\?|$)/.test(url);

function hostnameOf(hostHeader: string): string {
  try {
    return new URL(`http://${hostHeader}`).hostname.replace(/^\[|\]$/g, "");
  } catch {
    return "";
  }
}

function readCookie(header: string | undefined, name: string): string | null {
  for (const part of header?.split(";") ?? []) {
    const [key, ...rest] = part.trim().split("=");
    if (key !== name) continue;
    try {
      return decodeURIComponent(rest.join("="));
    } catch {
      return null; // Malformed escapes: treated as no cookie, so the answer is a plain 401.
    }
  }
  return null;
}

function tokenFromRequest(request: FastifyRequest): string | null {
  const auth = request.headers.authorization;
  if (auth?.startsWith("Bearer ")) return auth.slice(7).trim();
  return readCookie(request.headers.cookie, TOKEN_COOKIE);
}

/**
 * The security floor, on every request — WebSocket upgrades included, since @fastify/websocket
 * runs onRequest hooks before it upgrades: a Host we answer to (DNS rebinding), no foreign Origin
 * (cross-site requests), and the token on /api, /mcp and /metrics. `?token=` on a page URL is
 * traded for an HttpOnly cookie, so the panel never keeps the token where scripts can read it.
 * Wrong tokens are counted per remote address; too many in a window get 429 (rate-limit.ts).
 */
export function registerGuard(app: FastifyInstance, config: AppConfig, token: string): FailedAuthLimiter {
  const limiter = new FailedAuthLimiter(config.authFailureLimit, config.authFailureWindowMs);
  const allowedHosts = new Set([...LOOPBACK_NAMES, ...config.allowedHosts.map((h) => h.toLowerCase())]);
  if (!["0.0.0.0", "::"].includes(config.host)) allowedHosts.add(config.host.toLowerCase());

  const refuse = (reply: FastifyReply, status: number, error: string) => reply.code(status).send({ error });
  const tooMany = (reply: FastifyReply, retryAfterS: number) =>
    reply
      .code(429)
      .header("retry-after", String(retryAfterS))
      .send({ error: `too many wrong tokens from this address; try again in ${retryAfterS} s (CORRAL_AUTH_FAILURE_LIMIT per CORRAL_AUTH_FAILURE_WINDOW_S)` });

  app.addHook("onRequest", async (request, reply) => {
    const host = request.headers.host ?? "";
    if (!allowedHosts.has(hostnameOf(host).toLowerCase())) {
      return refuse(reply, 403, `Host "${host}" is not allowed; open Corral through localhost or add the name to CORRAL_ALLOWED_HOSTS`);
    }
    const origin = request.headers.origin;
    if (origin && origin !== `http://${host}` && origin !== `https://${host}` && !config.allowedOrigins.includes(origin)) {
      return refuse(reply, 403, `Origin "${origin}" is not allowed; add it to CORRAL_ALLOWED_ORIGINS to permit it`);
    }
    // A preflight carries no token by design; it only learns what the allowed origin may send.
    if (applyCors(request, reply, config.allowedOrigins) === "preflight") return reply.code(204).send();
    const url = request.url;
    if (isProtected(url)) {
      const given = tokenFromRequest(request);
      if (!given) return refuse(reply, 401, "missing token: send Authorization: Bearer <token> (printed at startup, kept in the data dir's token file)");
      const wait = limiter.retryAfterS(request.ip);
      if (wait) return tooMany(reply, wait);
      if (!tokensMatch(given, token)) {
        limiter.recordFailure(request.ip);
        return refuse(reply, 401, "wrong token: use the token printed at startup (kept in the data dir's token file)");
      }
      return;
    }
    const query = url.indexOf("?");
    if (request.method === "GET" && query >= 0) {
      const params = new URLSearchParams(url.slice(query + 1));
      const given = params.get("token");
      if (given) {
        const wait = limiter.retryAfterS(request.ip);
        if (wait) return tooMany(reply, wait);
        if (tokensMatch(given, token)) {
          params.delete("token");
          const rest = params.toString();
          reply.header("set-cookie", `${TOKEN_COOKIE}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`);
          return reply.redirect(`${url.slice(0, query)}${rest ? `?${rest}` : ""}`, 302);
        }
        limiter.recordFailure(request.ip);
      }
    }
  });
  return limiter;
}
