import type { FastifyInstance } from "fastify";
import { AuditListQuerySchema, AuditListSchema } from "@corral/shared";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import type { Services } from "../../services.js";
import { errors } from "../contracts.js";

/** The audit trail, newest first: who launched or cancelled which job, through which door and client. */
export function auditRoutes(services: Services) {
  return async (fastify: FastifyInstance) => {
    fastify.withTypeProvider<ZodTypeProvider>().get(
      "/api/audit",
      {
        schema: {
          summary: "The audit trail, newest first: who launched or cancelled which job, through which door and client",
          tags: ["audit"],
          querystring: AuditListQuerySchema,
          response: { 200: AuditListSchema, ...errors() },
        },
      },
      async (request) => services.audit.list(request.query),
    );
  };
}
