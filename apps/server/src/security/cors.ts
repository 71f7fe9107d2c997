import fastifyCors from "@fastify/cors";
import type { FastifyInstance } from "fastify";

/**
 * CORS only for the origins in CORRAL_ALLOWED_ORIGINS, and never with credentials: such a page
 * sends the token itself, and the guard ignores the panel's cookie on its requests. With the
 * setting empty no CORS header is ever sent. Registered before the guard: a preflight carries no
 * credentials by design, and its answer only says what the allowed origin may send.
 */
export async function registerCors(app: FastifyInstance, allowedOrigins: readonly string[]): Promise<void> {
  await app.register(fastifyCors, {
    origin: (origin, callback) => callback(null, origin !== undefined && allowedOrigins.includes(origin)),
    credentials: false,
    methods: ["GET", "POST", "PUT", "PATCH", "DELETE"],
    // The API's and the MCP transport's request headers, and what a page may read back.
    allowedHeaders: ["authorization", "content-type", "x-corral-client", "mcp-session-id", "mcp-protocol-version", "last-event-id"],
    exposedHeaders: ["mcp-session-id", "retry-after"],
    maxAge: 600,
  });
}
