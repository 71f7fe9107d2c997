import type { FastifyInstance } from "fastify";
import { JobIdSchema } from "@corral/shared";
import { z } from "zod";
import type { Services } from "../../services.js";
import { parseInput } from "../../lib/errors.js";

const ParamsSchema = z.object({ id: JobIdSchema });
const QuerySchema = z.object({ chars: z.coerce.number().int().min(1).max(16_384).default(400) }).strict();

/**
 * The last characters a job printed: the panel's "live activity" line for running jobs, without
 * reading each job's whole log from a cursor.
 */
export function jobTailRoutes(services: Services) {
  return async (app: FastifyInstance) => {
    app.get("/api/jobs/:id/tail", async (request) => {
      const { id } = parseInput(ParamsSchema, request.params);
      const { chars } = parseInput(QuerySchema, request.query);
      services.jobs.get(id);
      return { text: services.jobs.outputTail(id, chars) };
    });
  };
}
