import type { FastifyInstance } from "fastify";
import { BrowserSessionListSchema, SessionIdSchema, SessionsRevokedSchema } from "@corral/shared";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { notFound } from "../../lib/errors.js";
import type { Services } from "../../services.js";
import { errors } from "../contracts.js";

const IdParamsSchema = z.object({ id: SessionIdSchema });
const tags = ["sessions"];

/** Signed-in browsers for the Connect page: list them, sign one out, or sign out everywhere. */
export function sessionRoutes(services: Services) {
  return async (fastify: FastifyInstance) => {
    const app = fastify.withTypeProvider<ZodTypeProvider>();
    const { sessions } = services;

    app.get(
      "/api/sessions",
      { schema: { summary: "Signed-in browsers", tags, response: { 200: BrowserSessionListSchema, ...errors() } } },
      async (request) => ({ sessions: await sessions.list(request.browserSession?.id ?? null) }),
    );

    app.delete(
      "/api/sessions/:id",
      {
        schema: {
          summary: "Sign one browser out",
          tags,
          params: IdParamsSchema,
          response: { 204: z.undefined().describe("Signed out"), ...errors(404) },
        },
      },
      async (request, reply) => {
        const { id } = request.params;
        if (!(await sessions.revoke(id))) throw notFound(`no session ${id}; see GET /api/sessions`, "id");
        if (request.browserSession?.id === id) reply.clearCookie(sessions.cookieName, { path: "/" });
        return reply.code(204).send();
      },
    );

    app.delete(
      "/api/sessions",
      { schema: { summary: "Sign every browser out", tags, response: { 200: SessionsRevokedSchema, ...errors() } } },
      async (request, reply) => {
        const revoked = await sessions.revokeAll();
        if (request.browserSession) reply.clearCookie(sessions.cookieName, { path: "/" });
        return { revoked };
      },
    );
  };
}
