import type { FastifyInstance } from "fastify";
import type { ConnectInfo } from "@corral/shared";
import type { Services } from "../../services.js";

/**
 * The token and MCP URLs for the panel's Connect page. The guard already required the token
 * (cookie or header) to get here, so this reveals nothing the caller lacks; the panel needs it
 * in clear to print copy-ready `claude mcp add` commands.
 */
export function connectRoutes(services: Services, token: string) {
  return async (app: FastifyInstance) => {
    app.get("/api/connect", async (request, reply): Promise<ConnectInfo> => {
      reply.header("cache-control", "no-store");
      const baseUrl = `${request.protocol}://${request.headers.host ?? `${services.config.host}:${services.config.port}`}`;
      return {
        token,
        baseUrl,
        mcpUrl: `${baseUrl}/mcp`,
        mounts: services.agents.list().map((a) => ({ agent: a.name, url: `${baseUrl}/mcp/${a.name}`, enabled: a.enabled })),
        workdirRoots: services.config.workdirRoots,
      };
    });
  };
}
