import type { FastifyInstance } from "fastify";
import { ConnectInfoSchema } from "@corral/shared";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import type { Services } from "../../services.js";
import { errors } from "../contracts.js";
import { TOOLSET_NAMES, TOOLSETS } from "../../mcp/toolsets.js";

/**
 * The token and MCP URLs for the panel's Connect page. The guard already required the token
 * (cookie or header) to get here, so this reveals nothing the caller lacks; the panel needs it
 * in clear to print copy-ready `claude mcp add` commands.
 */
export function connectRoutes(services: Services, token: string) {
  return async (fastify: FastifyInstance) => {
    fastify.withTypeProvider<ZodTypeProvider>().get(
      "/api/connect",
      {
        schema: {
          summary: "The token, the MCP URLs and the workdir roots, for wiring an MCP client to this server",
          tags: ["server"],
          response: { 200: ConnectInfoSchema, ...errors() },
        },
      },
      async (request, reply) => {
        reply.header("cache-control", "no-store");
        const baseUrl = `${request.protocol}://${request.headers.host ?? `${services.config.host}:${services.config.port}`}`;
        return {
          token,
          baseUrl,
          mcpUrl: `${baseUrl}/mcp`,
          toolsets: TOOLSET_NAMES.map((name) => ({ name, about: TOOLSETS[name].about, tools: [...TOOLSETS[name].tools] })),
          mounts: (await services.agents.list()).map((a) => ({ agent: a.name, url: `${baseUrl}/mcp/${a.name}`, enabled: a.enabled })),
          workdirRoots: services.config.workdirRoots,
        };
      },
    );
  };
}
