import type { FastifyInstance } from "fastify";
import { SessionIdSchema, type BrowserSessionList } from "@corral/shared";
import { z } from "zod";
import { notFound, parseInput } from "../../lib/errors.js";
import type { Services } from "../../services.js";

const IdParamsSchema = z.object({ id: SessionIdSchema });

/** Signed-in browsers for the Connect page: list them, sign one out, or sign out everywhere. */
export function sessionRoutes(services: Services) {
  return async (app: FastifyInstance) => {
    const { sessions } = services;

    app.get("/api/sessions", async (request): Promise<BrowserSessionList> => ({
      sessions: sessions.list(request.browserSession?.id ?? null),
    }));

    app.delete("/api/sessions/:id", async (request, reply) => {
      const { id } = parseInput(IdParamsSchema, request.params);
      if (!sessions.revoke(id)) throw notFound(`no session ${id}; see GET /api/sessions`, "id");
      if (request.browserSession?.id === id) reply.clearCookie(sessions.cookieName, { path: "/" });
      return reply.code(204).send();
    });

    app.delete("/api/sessions", async (request, reply) => {
      const revoked = sessions.revokeAll();
      if (request.browserSession) reply.clearCookie(sessions.cookieName, { path: "/" });
      return { revoked };
    });
  };
}
