import type { FastifyInstance } from "fastify";
import { publicRoute } from "../security/access.js";

export async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get("/api/health", publicRoute, async () => ({ ok: true }));
}
