import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import type { FailedAuthLimiter } from "../security/rate-limit.js";
import type { Services } from "../services.js";
import { errors } from "./contracts.js";

/** `GET /metrics` in Prometheus text format; the guard asks for the token as on /api. */
export function metricsRoutes(services: Services, limiter: FailedAuthLimiter) {
  return async (fastify: FastifyInstance) => {
    fastify.withTypeProvider<ZodTypeProvider>().get(
      "/metrics",
      {
        schema: {
          summary: "Metrics in the Prometheus text format",
          tags: ["server"],
          response: {
            200: { description: "Prometheus exposition format 0.0.4", content: { "text/plain": { schema: z.string() } } },
            ...errors(),
          },
        },
      },
      async (_request, reply) => {
        reply.header("content-type", "text/plain; version=0.0.4; charset=utf-8");
        return services.metrics.render({ authFailures: limiter.failuresTotal, authRejected: limiter.rejectedTotal });
      },
    );
  };
}
