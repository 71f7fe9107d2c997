import type { FastifyReply, FastifyRequest } from "fastify";

/** Headers a browser page may send cross-origin: the API's and the MCP transport's. */
const ALLOWED_HEADERS = "authorization, content-type, x-corral-client, mcp-session-id, mcp-protocol-version, last-event-id";
const EXPOSED_HEADERS = "mcp-session-id, retry-after";

/**
 * CORS only for the origins in CORRAL_ALLOWED_ORIGINS, and only with the token in a header:
 * credentials (the panel's cookie) are never allowed cross-origin. With the setting empty no
 * CORS header is ever sent, so browsers keep other pages out on their own too.
 */
export function applyCors(request: FastifyRequest, reply: FastifyReply, allowedOrigins: readonly string[]): "preflight" | "simple" | null {
  const origin = request.headers.origin;
  if (!origin || !allowedOrigins.includes(origin)) return null;
  reply.header("access-control-allow-origin", origin);
  reply.header("vary", "Origin");
  if (request.method === "OPTIONS" && request.headers["access-control-request-method"]) {
    reply.header("access-control-allow-methods", "GET, POST, PUT, PATCH, DELETE");
    reply.header("access-control-allow-headers", ALLOWED_HEADERS);
    reply.header("access-control-max-age", "600");
    return "preflight";
  }
  reply.header("access-control-expose-headers", EXPOSED_HEADERS);
  return "simple";
}
