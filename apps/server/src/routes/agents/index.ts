import type { FastifyInstance } from "fastify";
import { AgentNameSchema, CreateAgentBodySchema, UpdateAgentBodySchema } from "@corral/shared";
import { z } from "zod";
import type { Services } from "../../services.js";
import { parseInput } from "../../lib/errors.js";

const NameParamsSchema = z.object({ name: AgentNameSchema });

export function agentRoutes(services: Services) {
  return async (app: FastifyInstance) => {
    const { agents } = services;

    app.get("/api/agents", async () => ({ agents: await agents.withAvailability(agents.list()) }));

    app.post("/api/agents", async (request, reply) => {
      const agent = agents.create(parseInput(CreateAgentBodySchema, request.body));
      reply.code(201);
      return (await agents.withAvailability([agent]))[0];
    });

    app.get("/api/agents/:name", async (request) => {
      const { name } = parseInput(NameParamsSchema, request.params);
      return (await agents.withAvailability([agents.get(name)]))[0];
    });

    app.patch("/api/agents/:name", async (request) => {
      const { name } = parseInput(NameParamsSchema, request.params);
      const agent = agents.update(name, parseInput(UpdateAgentBodySchema, request.body));
      return (await agents.withAvailability([agent]))[0];
    });

    app.delete("/api/agents/:name", async (request, reply) => {
      const { name } = parseInput(NameParamsSchema, request.params);
      agents.remove(name);
      reply.code(204);
    });
  };
}
