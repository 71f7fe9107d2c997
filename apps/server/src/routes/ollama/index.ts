import type { FastifyInstance } from "fastify";
import { OllamaProbeBodySchema, OllamaServerQuerySchema } from "@corral/shared";
import { parseInput } from "../../lib/errors.js";
import type { Services } from "../../services.js";

/** The Ollama server's models with what they can do, and live tool-call probes. */
export function ollamaRoutes(services: Services) {
  return async (app: FastifyInstance) => {
    const { ollama } = services;

    app.get("/api/ollama/models", async (request) => ollama.models(parseInput(OllamaServerQuerySchema, request.query)));

    app.post("/api/ollama/probe", async (request) => ollama.probe(parseInput(OllamaProbeBodySchema, request.body)));
  };
}
