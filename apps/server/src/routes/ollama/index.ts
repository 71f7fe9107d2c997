import type { FastifyInstance } from "fastify";
import {
  OllamaLastKnownSchema,
  OllamaModelListSchema,
  OllamaProbeBodySchema,
  OllamaProbeResultSchema,
  OllamaServerQuerySchema,
} from "@corral/shared";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import type { Services } from "../../services.js";
import { BODY_ERRORS, errors } from "../contracts.js";

const tags = ["ollama"];

/** The Ollama server's models with what they can do, and live tool-call probes. */
export function ollamaRoutes(services: Services) {
  return async (fastify: FastifyInstance) => {
    const app = fastify.withTypeProvider<ZodTypeProvider>();
    const { ollama } = services;

    app.get(
      "/api/ollama/models",
      {
        schema: {
          summary: "The Ollama server's models with what they can do (that of an Ollama agent, else CORRAL_OLLAMA_URL)",
          tags,
          querystring: OllamaServerQuerySchema,
          response: { 200: OllamaModelListSchema, ...errors(404, 503) },
        },
      },
      async (request) => ollama.models(request.query),
    );

    app.get(
      "/api/ollama/models/last-known",
      {
        schema: {
          summary: "The models of the server's last successful listing, with when it was read (for while it does not answer)",
          tags,
          querystring: OllamaServerQuerySchema,
          response: { 200: OllamaLastKnownSchema, ...errors(404) },
        },
      },
      async (request) => ollama.lastKnown(request.query),
    );

    app.post(
      "/api/ollama/probe",
      {
        schema: {
          summary: "Ask a model for one small tool call, to see whether it really calls tools",
          tags,
          body: OllamaProbeBodySchema,
          response: { 200: OllamaProbeResultSchema, ...errors(404, 409, 503, ...BODY_ERRORS) },
        },
      },
      async (request, reply) => {
        // A probe takes as long as the model thinks: one the caller gave up on (the panel's Stop) stops asking Ollama.
        const gone = new AbortController();
        reply.raw.once("close", () => {
          if (!reply.raw.writableFinished) gone.abort();
        });
        return ollama.probe(request.body, gone.signal);
      },
    );
  };
}
