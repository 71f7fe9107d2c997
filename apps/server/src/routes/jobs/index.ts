import type { FastifyInstance } from "fastify";
import { JobIdSchema, JobListQuerySchema, LaunchJobBodySchema, OutputQuerySchema } from "@corral/shared";
import { z } from "zod";
import type { Services } from "../../services.js";
import { parseInput } from "../../lib/errors.js";
import { restActor } from "../../observability/audit.js";

const IdParamsSchema = z.object({ id: JobIdSchema });
const TailQuerySchema = z.object({ chars: z.coerce.number().int().min(1).max(16_384).default(400) }).strict();

export function jobRoutes(services: Services) {
  return async (app: FastifyInstance) => {
    const { jobs } = services;

    app.get("/api/jobs", async (request) => jobs.list(parseInput(JobListQuerySchema, request.query)));

    app.post("/api/jobs", async (request, reply) => {
      const { agent, ...input } = parseInput(LaunchJobBodySchema, request.body);
      const { door, client } = restActor(request.headers);
      reply.code(201);
      return jobs.launch(agent, input, door, client);
    });

    app.get("/api/jobs/:id", async (request) => jobs.get(parseInput(IdParamsSchema, request.params).id));

    app.get("/api/jobs/:id/attempts", async (request) => ({
      attempts: jobs.attempts(parseInput(IdParamsSchema, request.params).id),
    }));

    app.post("/api/jobs/:id/cancel", async (request) =>
      jobs.cancel(parseInput(IdParamsSchema, request.params).id, restActor(request.headers)),
    );

    app.get("/api/jobs/:id/output", async (request) => {
      const { id } = parseInput(IdParamsSchema, request.params);
      const { cursor, limit } = parseInput(OutputQuerySchema, request.query);
      return jobs.readOutput(id, cursor, limit);
    });

    // The output as the job's agent kind reads it: the panel's Readable view, with its own cursor.
    app.get("/api/jobs/:id/readable", async (request) => {
      const { id } = parseInput(IdParamsSchema, request.params);
      const { cursor, limit } = parseInput(OutputQuerySchema, request.query);
      return jobs.readReadable(id, cursor, limit);
    });

    // The last characters a job printed: the panel's live-activity line, without a cursor walk.
    app.get("/api/jobs/:id/tail", async (request) => {
      const { id } = parseInput(IdParamsSchema, request.params);
      const { chars } = parseInput(TailQuerySchema, request.query);
      return { text: jobs.outputTail(id, chars) };
    });
  };
}
