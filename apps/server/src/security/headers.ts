import type { FastifyInstance } from "fastify";

/**
 * No page of Corral's may be framed (another local web app is same-site with it, so a framed
 * panel would be signed in and a click could be stolen). Routes that set a stricter policy (raw
 * workdir files) keep `frame-ancestors` in theirs.
 */
export const FRAME_POLICY = "frame-ancestors 'none'";

/**
 * The built panel's policy: its scripts, styles, fonts and images come from this server, its API
 * and WebSocket too (`'self'` covers `ws:` to the same host and port); nothing inline runs, no
 * plugin loads, no `<base>` redirects relative URLs, forms post only here. React sets `style=`
 * through the CSSOM, which `style-src` does not govern, so no `'unsafe-inline'` is needed.
 */
const PANEL_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  FRAME_POLICY,
].join("; ");

/** `pnpm dev`: Vite injects the React refresh preamble as an inline script and styles as `<style>` tags. */
const DEV_POLICY = PANEL_POLICY.replace("script-src 'self'", "script-src 'self' 'unsafe-inline'").replace(
  "style-src 'self'",
  "style-src 'self' 'unsafe-inline'",
);

/** Headers on every answer: the content policy above, no framing, and no guessing of content types. */
export function registerSecurityHeaders(app: FastifyInstance, devWeb: boolean): void {
  const policy = devWeb ? DEV_POLICY : PANEL_POLICY;
  app.addHook("onRequest", async (_request, reply) => {
    reply.header("x-frame-options", "DENY");
    reply.header("content-security-policy", policy);
    reply.header("x-content-type-options", "nosniff");
    reply.header("referrer-policy", "no-referrer");
  });
}
