import type { FastifyInstance } from "fastify";
import {
  type Agent,
  type AgentWithAvailability,
  AgentKindListSchema,
  AgentListSchema,
  AgentNameSchema,
  AgentWithAvailabilitySchema,
  CreateAgentBodySchema,
  UpdateAgentBodySchema,
} from "@corral/shared";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Services } from "../../services.js";
import { BODY_ERRORS, errors } from "../contracts.js";

const NameParamsSchema = z.object({ name: AgentNameSchema });
const tags = ["agents"];

export function agentRoutes(services: Services) {
  return async (fastify: FastifyInstance) => {
    const app = fastify.withTypeProvider<ZodTypeProvider>();
    const { agents } = services;
    const withAvailability = async (agent: Agent): Promise<AgentWithAvailability> => {
      const [answer] = await agents.withAvailability([agent]);
      if (!answer) throw new Error(`no availability for agent ${agent.name}`);
      return answer;
    };

    app.get(
      "/api/agents",
      { schema: { summary: "Every agent, with whether its CLI or server is available", tags, response: { 200: AgentListSchema, ...errors() } } },
      async () => ({ agents: await agents.withAvailability(await agents.list()) }),
    );

    app.get(
      "/api/agent-kinds",
      {
        schema: {
          summary: "Every agent kind, with the fields its agents' create and edit forms ask for",
          tags,
          response: { 200: AgentKindListSchema, ...errors() },
        },
      },
      async () => ({ kinds: agents.kinds() }),
    );

    app.post(
      "/api/agents",
      {
        schema: {
          summary: "Add an agent",
          tags,
          body: CreateAgentBodySchema,
          response: { 201: AgentWithAvailabilitySchema, ...errors(409, ...BODY_ERRORS) },
        },
      },
      async (request, reply) => {
        const agent = await agents.create(request.body);
        reply.code(201);
        return withAvailability(agent);
      },
    );

    app.get(
      "/api/agents/:name",
      { schema: { summary: "One agent", tags, params: NameParamsSchema, response: { 200: AgentWithAvailabilitySchema, ...errors(404) } } },
      async (request) => withAvailability(await agents.get(request.params.name)),
    );

    app.patch(
      "/api/agents/:name",
      {
        schema: {
          summary: "Change an agent's settings",
          tags,
          params: NameParamsSchema,
          body: UpdateAgentBodySchema,
          response: { 200: AgentWithAvailabilitySchema, ...errors(404, ...BODY_ERRORS) },
        },
      },
      async (request) => withAvailability(await agents.update(request.params.name, request.body)),
    );

    app.delete(
      "/api/agents/:name",
      {
        schema: {
          summary: "Delete an agent (built-in agents and agents with jobs can only be disabled)",
          tags,
          params: NameParamsSchema,
          response: { 204: z.undefined().describe("Deleted"), ...errors(404, 409) },
        },
      },
      async (request, reply) => {
        await agents.remove(request.params.name);
        return reply.code(204).send();
      },
    );
  };
}
