import { ConfigFileStatusSchema } from "@corral/shared";
import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Services } from "../services.js";
import { errors } from "./contracts.js";

const tags = ["config"];

/** The config file (CORRAL_CONFIG): whether it loaded, and the current agents written as one. */
export function configFileRoutes(services: Services) {
  return async (fastify: FastifyInstance) => {
    const app = fastify.withTypeProvider<ZodTypeProvider>();
    app.get(
      "/api/config",
      {
        schema: {
          summary: "The config file: its path, the agents it declares, and why it was refused if it was",
          tags,
          response: { 200: ConfigFileStatusSchema, ...errors() },
        },
      },
      async () => services.configFile.status(),
    );
    app.get(
      "/api/config/export",
      {
        schema: {
          summary: "The agents a user added, budgets and price overrides, as a config file (YAML); no keys",
          tags,
          response: { 200: { description: "A corral.yaml", content: { "application/yaml": { schema: z.string() } } }, ...errors() },
        },
      },
      async (_request, reply) => {
        reply.header("content-type", "application/yaml; charset=utf-8");
        reply.header("content-disposition", 'attachment; filename="corral.yaml"');
        return services.configFile.export();
      },
    );
  };
}
