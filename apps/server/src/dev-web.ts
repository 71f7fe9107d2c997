import type { IncomingMessage, Server } from "node:http";
import path from "node:path";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { installRoot } from "./lib/install-root.js";

const webRoot = path.join(installRoot, "apps/web");
/**
 * What Vite may serve to anyone who can reach the port (panel pages need no sign-in): the panel's
 * sources, the shared schemas and the installed packages — not the server's code or the repo's
 * other files.
 */
const servedRoots = [webRoot, path.join(installRoot, "packages/shared"), path.join(installRoot, "node_modules")];
/**
 * Vite's own deny list (setting one replaces it), plus the server's package: pnpm links the
 * workspace's packages under node_modules, and Vite checks the path it was asked for, not the link's target.
 */
const servedDeny = [".env", ".env.*", "*.{crt,pem,key,p12,pfx,cer,der}", ".npmrc", ".yarnrc.yml", "**/.git/**", "**/@corral/server/**"];

/**
 * Vite's hot-reload client opens its socket on `/` with one of these subprotocols. Anything else
 * goes to Fastify: Vite leaves an upgrade it does not take unanswered.
 */
export function isHotReloadSocket(request: IncomingMessage): boolean {
  if (!["vite-hmr", "vite-ping"].includes(String(request.headers["sec-websocket-protocol"]))) return false;
  try {
    return new URL(request.url ?? "", "http://localhost").pathname === "/";
  } catch {
    return false;
  }
}

/**
 * `pnpm dev`: Vite serves the panel from source with hot reload through this server, so one
 * URL (and one sign-in) covers the panel, REST, WebSocket and MCP. Its hot-reload socket
 * arrives through `hmrUpgrades` (app.ts hands it the upgrades Vite's client makes) and is
 * Vite's own — checked by Vite's token and host list, never counted as a wrong Corral token.
 * Returns the handler for panel pages: everything no Corral route matched.
 */
export async function registerDevWeb(
  app: FastifyInstance,
  hmrUpgrades: Server,
  allowedHosts: string[],
): Promise<(request: FastifyRequest, reply: FastifyReply) => void> {
  const { createServer } = await import("vite");
  const vite = await createServer({
    root: webRoot,
    configFile: path.join(webRoot, "vite.config.ts"),
    server: {
      middlewareMode: true,
      hmr: { server: hmrUpgrades },
      allowedHosts,
      fs: { strict: true, allow: servedRoots, deny: servedDeny },
    },
    appType: "spa",
  });
  app.addHook("onClose", () => vite.close());
  return (request, reply) => {
    // Vite writes the answer itself: carry over the headers set so far (security/headers.ts).
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
    reply.hijack();
    vite.middlewares(request.raw, reply.raw, () => {
      reply.raw.statusCode = 404;
      reply.raw.end();
    });
  };
}
