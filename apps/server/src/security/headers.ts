import type { FastifyInstance } from "fastify";

/**
 * Headers on every answer: no page of Corral's may be framed (another local web app is same-site
 * with it, so a framed panel would be signed in and a click could be stolen), and browsers must
 * not guess content types. Routes that set a stricter policy (raw workdir files) keep
 * `frame-ancestors` in theirs.
 */
export const FRAME_POLICY = "frame-ancestors 'none'";

export function registerSecurityHeaders(app: FastifyInstance): void {
  app.addHook("onRequest", async (_request, reply) => {
    reply.header("x-frame-options", "DENY");
    reply.header("content-security-policy", FRAME_POLICY);
    reply.header("x-content-type-options", "nosniff");
    reply.header("referrer-policy", "no-referrer");
  });
}
