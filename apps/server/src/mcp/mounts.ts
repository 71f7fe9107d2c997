import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { Services } from "../services.js";
import { createMcpServer, type McpMount } from "./server-factory.js";

interface Session {
  transport: StreamableHTTPServerTransport;
  mount: McpMount;
  lastSeen: number;
  /** Requests still open (a long `_run`, an SSE stream): a session is idle only at zero. */
  inFlight: number;
  close(): Promise<void>;
}

function jsonRpcError(reply: FastifyReply, status: number, message: string) {
  return reply.code(status).send({ jsonrpc: "2.0", error: { code: -32000, message }, id: null });
}

/**
 * Streamable HTTP MCP at `/mcp` and `/mcp/<agent>`. Sessions live in memory; idle ones expire
 * (real clients rarely send DELETE) and all are closed at shutdown.
 */
export function mcpRoutes(services: Services) {
  return async (app: FastifyInstance) => {
    const sessions = new Map<string, Session>();

    const handle = async (request: FastifyRequest, reply: FastifyReply, mount: McpMount) => {
      if (mount.agent && !services.agents.isEnabled(mount.agent)) {
        return jsonRpcError(reply, 404, `no enabled agent named ${mount.agent}; see GET /api/agents`);
      }
      const sessionId = request.headers["mcp-session-id"];
      let session = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
      if (typeof sessionId === "string" && (!session || session.mount.agent !== mount.agent)) {
        return jsonRpcError(reply, 404, "session not found or expired; initialize a new session");
      }
      if (!session) {
        if (request.method !== "POST" || !isInitializeRequest(request.body)) {
          return jsonRpcError(reply, 400, "no session: send an initialize request first (without an mcp-session-id header)");
        }
        session = await openSession(mount);
      }
      reply.hijack();
      session.inFlight++;
      try {
        await session.transport.handleRequest(request.raw, reply.raw, request.body);
      } finally {
        session.inFlight--;
        session.lastSeen = Date.now();
      }
    };

    const openSession = async (mount: McpMount): Promise<Session> => {
      const { server, dispose } = createMcpServer(services, mount);
      const session: Session = {
        mount,
        lastSeen: Date.now(),
        inFlight: 0,
        transport: new StreamableHTTPServerTransport({
          sessionIdGenerator: randomUUID,
          onsessioninitialized: (id) => void sessions.set(id, session),
          onsessionclosed: (id) => void sessions.delete(id),
        }),
        async close() {
          dispose();
          await server.close();
        },
      };
      session.transport.onclose = () => {
        if (session.transport.sessionId) sessions.delete(session.transport.sessionId);
        dispose();
      };
      await server.connect(session.transport);
      return session;
    };

    const sweep = setInterval(() => {
      const cutoff = Date.now() - services.config.mcpSessionIdleMs;
      for (const [id, session] of sessions) {
        if (session.inFlight === 0 && session.lastSeen < cutoff) {
          sessions.delete(id);
          void session.close();
        }
      }
    }, Math.min(60_000, services.config.mcpSessionIdleMs)).unref();

    app.addHook("onClose", async () => {
      clearInterval(sweep);
      await Promise.all([...sessions.values()].map((s) => s.close()));
      sessions.clear();
    });

    for (const method of ["GET", "POST", "DELETE"] as const) {
      app.route({ method, url: "/mcp", handler: (request, reply) => handle(request, reply, { agent: null }) });
      app.route({
        method,
        url: "/mcp/:agent",
        handler: (request, reply) => handle(request, reply, { agent: (request.params as { agent: string }).agent }),
      });
    }
  };
}
