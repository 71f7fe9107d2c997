import type { FastifyInstance } from "fastify";
import type { FailedAuthLimiter } from "../security/rate-limit.js";
import type { Services } from "../services.js";

/** `GET /metrics` in Prometheus text format; the guard asks for the token as on /api. */
export function metricsRoutes(services: Services, limiter: FailedAuthLimiter) {
  return async (app: FastifyInstance) => {
    app.get("/metrics", async (_request, reply) => {
      reply.header("content-type", "text/plain; version=0.0.4; charset=utf-8");
      return services.metrics.render({ authFailures: limiter.failuresTotal, authRejected: limiter.rejectedTotal });
    });
  };
}
