import type { ApiError } from "@corral/shared";
import { mkdirSync } from "node:fs";
import { createServer } from "node:http";
import fastifyCookie from "@fastify/cookie";
import Fastify, { LogController, type FastifyInstance, type FastifyReply } from "fastify";
import type { DestinationStream } from "pino";
import type { AppConfig } from "./config.js";
import { openRegistry } from "./db/open-registry.js";
import { runnerRoutes } from "./routes/runners.js";
import { watchRunnerLeases } from "./jobs/remote/leases.js";
import { keepArchivingWorktrees } from "./review/worktree-archiving.js";
import { REGISTRY_UNREACHABLE, registryUnreachable } from "./db/registry-error.js";
import { diskFull, diskFullError } from "./lib/disk-space.js";
import { lockTimedOut } from "./db/pg/lock-wait.js";
import { isHotReloadSocket } from "./dev-web.js";
import { ServiceError } from "./lib/errors.js";
import { mcpRoutes } from "./mcp/mounts.js";
import { toolAgentWarnings } from "./mcp/tool-agents.js";
import { agentRoutes } from "./routes/agents/index.js";
import { fileRoutes } from "./routes/files/index.js";
import { connectRoutes } from "./routes/connect/index.js";
import { conversationRoutes } from "./routes/conversations/index.js";
import { healthRoutes } from "./routes/health.js";
import { jobRoutes } from "./routes/jobs/index.js";
import { costRoutes } from "./routes/costs/index.js";
import { ollamaRoutes } from "./routes/ollama/index.js";
import { attachJobLog } from "./observability/job-log.js";
import { loggerOptions } from "./observability/log-options.js";
import { auditRoutes } from "./routes/audit/index.js";
import { metricsRoutes } from "./routes/metrics.js";
import { contractCompilers, registerContracts } from "./routes/contracts.js";
import { openApiRoutes } from "./routes/openapi.js";
import { panelRoutes } from "./routes/panel.js";
import { sessionRoutes } from "./routes/sessions/index.js";
import type { RouteEntry } from "./security/access.js";
import { registerCors } from "./security/cors.js";
import { limitConnections } from "./security/connection-limits.js";
import { registerGuard } from "./security/guard.js";
import { registerSecurityHeaders } from "./security/headers.js";
import { loadOrCreateToken } from "./security/token.js";
import { createServices, type Services } from "./services.js";
import { configFileRoutes } from "./routes/config-file.js";
import { isWebsocketUpgrade, refuseUpgrade, registerWebsocket, wsRoutes } from "./ws/index.js";

export interface CorralApp {
  app: FastifyInstance;
  services: Services;
  token: string;
  /** Every route and the access it declared (security/access.ts). */
  routes(): RouteEntry[];
}

export interface BuildOptions {
  /** Where logs go instead of stdout (tests read them back). */
  logStream?: DestinationStream;
}

export async function buildApp(config: AppConfig, options: BuildOptions = {}): Promise<CorralApp> {
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const token = loadOrCreateToken(config.dataDir, config.token);
  // PostgreSQL may drop an idle pooled connection (a restart, the network); the next query opens
  // another. Said in the log, once there is one.
  let onLostConnection: (err: Error) => void = (err) => {
    process.stderr.write(`lost a connection to the registry's PostgreSQL (${err.message}); the next query opens another\n`);
  };
  const registry = await openRegistry(config, (err) => onLostConnection(err));
  const services = await createServices(config, registry);
  await services.agents.seed();

  const app = Fastify({
    logger: loggerOptions(config, options.logStream),
    // Request lines would carry `?token=` from the URL Corral prints; errors are still logged.
    logController: new LogController({ disableRequestLogging: true }),
    forceCloseConnections: true,
    // Headers must arrive within the timeout, checked each second (Node's default: 60 s, checked each 30 s).
    http: { headersTimeout: config.headersTimeoutMs, connectionsCheckingInterval: 1000 },
    // A whole request (its body) within 5 minutes; an answer (an event stream, a WebSocket) may last.
    requestTimeout: 300_000,
    bodyLimit: config.bodyLimitBytes,
    schemaController: { compilersFactory: contractCompilers },
    // Malformed percent-encoding in a path: answer in the API's error shape, naming the URL.
    frameworkErrors: (error, _request, reply) => {
      void (reply as FastifyReply).code(400).send({ error: `invalid URL: ${error.message}`, code: "invalid_input", field: "url" } satisfies ApiError);
    },
  });

  limitConnections(app.server, { maxConnections: config.maxConnections, maxIdle: Math.floor(config.maxConnections / 2) });

  app.setErrorHandler(async (error, request, reply) => {
    if (error instanceof ServiceError) {
      const body: ApiError = { error: error.message, code: error.code, field: error.field, issues: error.issues, ...error.details };
      return reply.code(error.status).send(body);
    }
    const status = (error as { statusCode?: number }).statusCode;
    if ((error as { code?: string }).code === "FST_ERR_CTP_INVALID_JSON_BODY") {
      // secure-json-parse refuses `__proto__` and `constructor.prototype` keys (prototype pollution) the same way as broken JSON.
      const message = "request body is not valid JSON, or has a __proto__ or constructor.prototype key (refused: prototype pollution)";
      if (request.url.startsWith("/mcp")) return reply.code(400).send({ jsonrpc: "2.0", error: { code: -32700, message }, id: null });
      return reply.code(400).send({ error: message, code: "invalid_json" } satisfies ApiError);
    }
    if (status === 413) {
      return reply.code(413).send({
        error: `request body too large: the limit is ${config.bodyLimitBytes} bytes (CORRAL_BODY_LIMIT_BYTES)`,
        code: "payload_too_large",
      } satisfies ApiError);
    }
    if (status && status >= 400 && status < 500) {
      return reply.code(status).send({ error: (error as Error).message, code: status === 404 ? "not_found" : "invalid_input" } satisfies ApiError);
    }
    if (registryUnreachable(error)) {
      request.log.warn({ err: (error as Error).message }, "the registry's PostgreSQL could not be reached");
      return reply.code(503).send({
        error: REGISTRY_UNREACHABLE,
        code: "unavailable",
      } satisfies ApiError);
    }
    if (lockTimedOut(error)) {
      const message = (await registry.describeLockWait?.()) ?? "the registry gave up waiting for a lock; try again";
      request.log.warn({ err: (error as Error).message }, message);
      return reply.code(503).send({ error: message, code: "unavailable" } satisfies ApiError);
    }
    if (diskFull(error)) {
      const full = diskFullError(config.dataDir);
      request.log.warn({ err: (error as Error).message }, "the data dir's disk is full");
      return reply.code(full.status).send({ error: full.message, code: full.code } satisfies ApiError);
    }
    request.log.error(error);
    return reply.code(500).send({ error: "internal error; the server log has the details", code: "internal" } satisfies ApiError);
  });

  // One listener for upgrades: under `pnpm dev` hot reload's socket goes to Vite, one for
  // /api/ws through Fastify's router and so through the guard, any other is refused (404).
  // Neither server listens itself.
  const routedUpgrades = createServer();
  const hotReloadUpgrades = createServer();
  app.server.on("upgrade", (request, socket, head) => {
    if (config.devWeb && isHotReloadSocket(request)) hotReloadUpgrades.emit("upgrade", request, socket, head);
    else if (isWebsocketUpgrade(request)) routedUpgrades.emit("upgrade", request, socket, head);
    else refuseUpgrade(socket);
  });
  await registerWebsocket(app, routedUpgrades);
  registerSecurityHeaders(app, config.devWeb);
  // Cookies are set through @fastify/cookie; the guard reads them itself (see cookieValues).
  await app.register(fastifyCookie, { hook: false });
  await registerCors(app, config.allowedOrigins);
  const guard = registerGuard(app, config, token, services.sessions);
  onLostConnection = (err) => app.log.warn({ err: err.message }, "lost a connection to the registry's PostgreSQL; the next query opens another");
  const detachJobLog = attachJobLog(services.jobEvents, services.audit, app.log);
  await registerContracts(app, services.sessions.cookieName);
  await app.register(healthRoutes);
  await app.register(agentRoutes(services));
  await app.register(jobRoutes(services));
  await app.register(costRoutes(services));
  await app.register(fileRoutes(services));
  await app.register(wsRoutes(services));
  await app.register(ollamaRoutes(services));
  await app.register(connectRoutes(services, token));
  await app.register(auditRoutes(services));
  await app.register(sessionRoutes(services));
  await app.register(conversationRoutes(services));
  await app.register(metricsRoutes(services, guard.limiter));
  await app.register(configFileRoutes(services));
  await app.register(runnerRoutes(services));
  await app.register(openApiRoutes);
  await app.register(mcpRoutes(services));
  await app.register(panelRoutes(config, hotReloadUpgrades));

  // Jobs runners store: each change a runner NOTIFYs is read back and told as this server's own are;
  // runners' answers to browsing requests wake the request waiting for one at once.
  const hearingRunners = config.databaseUrl
    ? await (await import("./runner/hear-runners.js")).hearRunners(config.databaseUrl, services, app.log)
    : null;

  // Runners that fell silent lose their running jobs.
  const stopLeases =
    registry.dialect === "postgres"
      ? watchRunnerLeases(services.remoteJobs, config.runnerLeaseMs, (err) => app.log.warn({ err }, "could not check runners' heartbeats"))
      : null;

  let stopArchiving: (() => void) | null = null;
  app.addHook("onClose", async () => {
    stopLeases?.();
    stopArchiving?.();
    await hearingRunners?.close();
    services.configFile.close();
    services.jobEngine.shutdown();
    services.conversations.close();
    services.files.shutdown();
    detachJobLog();
    services.metrics.dispose();
    await registry.close();
  });
  // The server's own runner, which holds every job it launches, is in the registry before any.
  await services.runners.registerLocal();
  // Before recovery: a job's agent may be one the file declares.
  await services.configFile.start(app.log);
  for (const warning of toolAgentWarnings(await services.agents.list(), config)) app.log.warn(warning);
  // Before the jobs: a job that ends as it is recovered owes its answer to a conversation.
  await services.conversations.recover();
  await services.jobEngine.recover();
  // Worktrees left unreviewed past CORRAL_WORKTREE_DAYS lose their folders, never their branches.
  if (config.worktreeKeepMs !== null) {
    stopArchiving = keepArchivingWorktrees(services.worktrees, config.worktreeKeepMs, {
      info: (message) => app.log.info(message),
      warn: (message) => app.log.warn(message),
    });
  }
  return { app, services, token, routes: guard.routes };
}
