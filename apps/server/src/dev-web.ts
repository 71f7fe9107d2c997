import type { IncomingMessage, Server } from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

const webRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../web");

/** Vite's hot-reload client opens its socket with one of these subprotocols. */
export const isHotReloadSocket = (request: IncomingMessage) =>
  ["vite-hmr", "vite-ping"].includes(String(request.headers["sec-websocket-protocol"]));

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
    server: { middlewareMode: true, hmr: { server: hmrUpgrades }, allowedHosts },
    appType: "spa",
  });
  app.addHook("onClose", () => vite.close());
  return (request, reply) => {
    reply.hijack();
    vite.middlewares(request.raw, reply.raw, () => {
      reply.raw.statusCode = 404;
      reply.raw.end();
    });
  };
}
