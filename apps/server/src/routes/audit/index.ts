import type { FastifyInstance } from "fastify";
import { AuditListQuerySchema } from "@corral/shared";
import { parseInput } from "../../lib/errors.js";
import type { Services } from "../../services.js";

/** The audit trail, newest first: who launched or cancelled which job, through which door and client. */
export function auditRoutes(services: Services) {
  return async (app: FastifyInstance) => {
    app.get("/api/audit", async (request) => services.audit.list(parseInput(AuditListQuerySchema, request.query)));
  };
}
