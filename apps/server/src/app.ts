import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import Fastify, { type FastifyInstance } from "fastify";
import type { AppConfig } from "./config.js";
import { openDb } from "./db/client.js";
import { registerDevWeb } from "./dev-web.js";
import { ServiceError } from "./lib/errors.js";
import { mcpRoutes } from "./mcp/mounts.js";
import { agentRoutes } from "./routes/agents/index.js";
import { fileRoutes } from "./routes/files/index.js";
import { healthRoutes } from "./routes/health.js";
import { jobRoutes } from "./routes/jobs/index.js";
import { costRoutes } from "./routes/costs/index.js";
import { ollamaRoutes } from "./routes/ollama/index.js";
import { registerGuard } from "./security/guard.js";
import { loadOrCreateToken } from "./security/token.js";
import { createServices, type Services } from "./services.js";
import { registerWebsocket, wsRoutes } from "./ws/index.js";

/** The built panel: apps/web/dist, the same relative path from src/ and dist/. */
const webDist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../web/dist");

export interface CorralApp {
  app: FastifyInstance;
  services: Services;
  token: string;
}

export async function buildApp(config: AppConfig): Promise<CorralApp> {
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const token = loadOrCreateToken(config.dataDir, config.token);
  const db = openDb(path.join(config.dataDir, "corral.db"));
  const services = createServices(config, db.db);
  services.agents.seed();

  const app = Fastify({
    logger: { level: config.logLevel, redact: ["req.headers.authorization", "req.headers.cookie"] },
    forceCloseConnections: true,
    bodyLimit: 2 * 1024 * 1024,
  });

  app.setErrorHandler((error, request, reply) => {
    if (error instanceof ServiceError) {
      return reply.code(error.status).send({ error: error.message, field: error.field, issues: error.issues });
    }
    const status = (error as { statusCode?: number }).statusCode;
    if (status && status >= 400 && status < 500) {
      return reply.code(status).send({ error: (error as Error).message });
    }
    request.log.error(error);
    return reply.code(500).send({ error: "internal error; the server log has the details" });
  });

  await registerWebsocket(app);
  registerGuard(app, config, token);
  await app.register(healthRoutes);
  await app.register(agentRoutes(services));
  await app.register(jobRoutes(services));
  await app.register(costRoutes(services));
  await app.register(fileRoutes(services));
  await app.register(wsRoutes(services));
  await app.register(ollamaRoutes(services));
  await app.register(mcpRoutes(services));
  if (config.devWeb) {
    await registerDevWeb(app);
  } else if (existsSync(webDist)) {
    await app.register(fastifyStatic, { root: webDist, wildcard: false });
    app.setNotFoundHandler((request, reply) => {
      if (request.method === "GET" && !/^\/(api|mcp)(\/|$)/.test(request.url)) return reply.sendFile("index.html");
      return reply.code(404).send({ error: `no route ${request.method} ${request.url.split("?")[0]}` });
    });
  }

  app.addHook("onClose", async () => {
    services.jobs.shutdown();
    services.files.shutdown();
    db.close();
  });
  services.jobs.recover();
  return { app, services, token };
}
