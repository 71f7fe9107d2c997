import type { FastifyInstance } from "fastify";
import { RunnerListSchema } from "@corral/shared";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import type { Services } from "../services.js";
import { errors } from "./contracts.js";

/** The `corral runner` processes that announced themselves, newest first. */
export function runnerRoutes(services: Services) {
  return async (fastify: FastifyInstance) => {
    fastify.withTypeProvider<ZodTypeProvider>().get(
      "/api/runners",
      {
        schema: {
          summary: "The runners (corral runner) that announced themselves, newest first, with their labels, state and jobs held",
          tags: ["runners"],
          response: { 200: RunnerListSchema, ...errors() },
        },
      },
      async () => services.runners.list(),
    );
  };
}
