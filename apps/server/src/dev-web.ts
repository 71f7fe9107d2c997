import path from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyInstance } from "fastify";

const webRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../web");

/**
 * `pnpm dev`: Vite serves the panel from source with hot reload through this server, so one
 * URL (and one token exchange) covers the panel, REST, WebSocket and MCP.
 */
export async function registerDevWeb(app: FastifyInstance): Promise<void> {
  const { createServer } = await import("vite");
  const vite = await createServer({
    root: webRoot,
    configFile: path.join(webRoot, "vite.config.ts"),
    server: { middlewareMode: true, hmr: { server: app.server } },
    appType: "spa",
  });
  app.addHook("onRequest", (request, reply, done) => {
    if (/^\/(api|mcp)(\/|\?|$)/.test(request.url)) return done();
    reply.hijack();
    vite.middlewares(request.raw, reply.raw, () => {
      reply.raw.statusCode = 404;
      reply.raw.end();
    });
  });
  app.addHook("onClose", () => vite.close());
}
