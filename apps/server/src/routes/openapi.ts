import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { errors } from "./contracts.js";

/** The OpenAPI document the route contracts make (routes/contracts.ts); the panel's API page reads it. */
export async function openApiRoutes(fastify: FastifyInstance): Promise<void> {
  fastify.withTypeProvider<ZodTypeProvider>().get(
    "/api/openapi.json",
    {
      schema: {
        summary: "This document: every REST route with its parameters, body and responses (OpenAPI 3.1)",
        tags: ["server"],
        response: { 200: z.record(z.string(), z.unknown()).describe("OpenAPI 3.1 document"), ...errors() },
      },
    },
    async () => fastify.swagger() as unknown as Record<string, unknown>,
  );
}
