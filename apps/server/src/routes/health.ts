import { HealthSchema } from "@corral/shared";
import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { publicRoute } from "../security/access.js";

export async function healthRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.get(
    "/api/health",
    { ...publicRoute, schema: { summary: "Readiness: answers once the server is ready", tags: ["server"], response: { 200: HealthSchema } } },
    async () => ({ ok: true as const }),
  );
}
