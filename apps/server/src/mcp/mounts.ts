import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Services } from "../services.js";
import { McpOutbox } from "./outbox.js";
import type { ModernMcp } from "./modern.js";
import { loadMcpRuntime, type McpRuntime } from "./runtime.js";
import { McpSessions, SessionsFullError, type McpSession } from "./sessions.js";
import { clientTakesChannel, HubLinks, SessionHubLink } from "./hub-link.js";
import { EndedAnswers } from "./tools/ended-answers.js";
import { ReissuedCalls } from "./tools/reissued-calls.js";
import { noToolsReason, toolSets } from "./tool-agents.js";
import { type McpMount, parseToolsets, sameMount, TOOLSET_NAMES } from "./toolsets.js";

function jsonRpcError(reply: FastifyReply, status: number, message: string) {
  return reply.code(status).send({ jsonrpc: "2.0", error: { code: -32000, message }, id: null });
}

/** What a mount's URL asks to be shown: `?options=all` (every launch option) and `?toolsets=` (on `/mcp`). */
function mountOf(request: FastifyRequest, agent: string | null): McpMount | string {
  const { options, toolsets: named, ...other } = (request.query ?? {}) as Record<string, unknown>;
  const unknown = Object.keys(other)[0];
  if (unknown !== undefined)
    return `unknown query parameter ${JSON.stringify(unknown.slice(0, 40))}: an MCP URL takes only options=all (every launch option in the tools' schemas) and, on /mcp, toolsets=${TOOLSET_NAMES.join(",")} (or all)`;
  if (options !== undefined && options !== "all")
    return "options: the only value is all (every launch option in the tools' schemas); leave it out for the common ones";
  const toolsets = parseToolsets(named, agent);
  if (typeof toolsets === "string") return toolsets;
  return { agent, showAll: options === "all", toolsets };
}

/**
 * Whether a request is of the 2025-11-25 era (a session, or the `initialize` that opens one) as
 * the SDK's own routing decides it; a request on a session is, without reading further.
 */
async function isLegacy(request: FastifyRequest, mcp: McpRuntime): Promise<boolean> {
  if (request.headers["mcp-session-id"] !== undefined) return true;
  const headers = new Headers();
  for (const name of ["mcp-protocol-version", "mcp-method", "mcp-name", "content-type"]) {
    const value = request.headers[name];
    if (typeof value === "string") headers.set(name, value);
  }
  return mcp.isLegacyRequest(new Request(`http://corral${request.url}`, { method: request.method, headers }), request.body);
}

/**
 * Streamable HTTP MCP at `/mcp` and `/mcp/<agent>`, in both protocol eras. A 2026-07-28 request
 * is served on its own (`ModernMcp`); 2025-11-25 sessions live in memory, capped; idle ones
 * expire (real clients rarely send DELETE) and all are closed at shutdown.
 */
export function mcpRoutes(services: Services) {
  return async (app: FastifyInstance) => {
    const hubLinks = new HubLinks();
    const sessions = new McpSessions(services, hubLinks);
    const answers = new EndedAnswers(services.jobEvents, services.costs);
    const shared = { answers, reissues: new ReissuedCalls(), hubLinks };
    const outbox = new McpOutbox(services.config.mcpMaxPendingBytes);

    let modern: ModernMcp | undefined;
    const modernMcp = (mcp: McpRuntime) => {
      // A request the SDK refused is the client's mistake (debug); anything else failed in Corral (warn).
      const onError = (err: Error) =>
        err instanceof mcp.ProtocolError || err.message.startsWith("Rejected inbound request")
          ? app.log.debug({ err }, "MCP 2026-07-28 request refused")
          : app.log.warn({ err }, "MCP 2026-07-28 request failed");
      modern ??= new mcp.ModernMcp(services, shared, () => sessions.enabledAgents(), outbox, onError);
      return modern;
    };
    const onAgentsChanged = () => modern?.toolsChanged();
    services.agents.on("changed", onAgentsChanged);

    const handle = async (request: FastifyRequest, reply: FastifyReply, agent: string | null) => {
      const mount = mountOf(request, agent);
      if (typeof mount === "string") return jsonRpcError(reply, 400, mount);
      // From the registry read the sessions keep per change of it, not a read per request.
      if (mount.agent && !toolSets((await sessions.enabledAgents()).rows, services.config).has(mount.agent)) {
        return jsonRpcError(reply, 404, noToolsReason(mount.agent, services.config));
      }
      const mcp = await loadMcpRuntime();
      if (!(await isLegacy(request, mcp))) return modernMcp(mcp).serve(request, reply, mount);
      const sessionId = request.headers["mcp-session-id"];
      let session = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
      if (session && !sameMount(session.mount, mount)) {
        return jsonRpcError(
          reply,
          404,
          "session not found on this URL: it was opened on another (a session keeps the tools of the URL it was opened with); initialize a new session here, or go on at that URL",
        );
      }
      if (typeof sessionId === "string" && !session) {
        return jsonRpcError(
          reply,
          404,
          `session not found: it expired, was closed, or made room for newer sessions (at most ${sessions.max}, CORRAL_MCP_MAX_SESSIONS); initialize a new session`,
        );
      }
      if (!session) {
        if (request.method !== "POST" || !mcp.isInitializeRequest(request.body)) {
          return jsonRpcError(
            reply,
            400,
            "no session: send an initialize request first (without an mcp-session-id header), or speak MCP 2026-07-28 (each request carries its _meta)",
          );
        }
        try {
          sessions.makeRoom();
        } catch (err) {
          if (err instanceof SessionsFullError) return jsonRpcError(reply.header("retry-after", "5"), 503, err.message);
          throw err;
        }
        session = await openSession(mount, mcp);
      }
      await sessions.touch(session);
      const isCall = request.method === "POST";
      reply.hijack();
      if (isCall) session.calls++;
      try {
        await session.transport.handleRequest(request.raw, reply.raw, request.body);
      } catch (err) {
        // The reply is hijacked: Fastify's error handler cannot answer for us.
        request.log.error(err);
        if (!reply.raw.headersSent) {
          reply.raw.writeHead(500, { "content-type": "application/json" });
          reply.raw.end(
            JSON.stringify({ jsonrpc: "2.0", error: { code: -32603, message: "internal error; the server log has the details" }, id: null }),
          );
        } else reply.raw.destroy();
      } finally {
        if (isCall) session.calls--;
        session.lastSeen = Date.now();
        // An initialize the transport refused (a bad Accept header, say) leaves no session to keep.
        if (!session.transport.sessionId) sessions.close(session);
      }
    };

    const openSession = async (mount: McpMount, mcp: McpRuntime): Promise<McpSession> => {
      const { generation, rows } = await sessions.enabledAgents();
      const tools = mcp.createMcpServer(services, mount, rows, shared, "legacy");
      const transport = new mcp.NodeStreamableHttpTransport((id) => sessions.initialized(id, session), {
        maxCalls: services.config.mcpMaxCallsPerSession,
        outbox,
      });
      const hubLink = new SessionHubLink(
        services.conversations,
        services.jobEvents,
        (message) => transport.pushOnStream(message),
        () => clientTakesChannel(tools.server.server.getClientCapabilities()),
      );
      const session: McpSession = {
        mount,
        tools,
        toolsGeneration: 0,
        lastSeen: Date.now(),
        calls: 0,
        transport,
        hubLink,
        close: () => tools.server.close(),
      };
      transport.onclose = () => sessions.forget(session);
      transport.onstream = (open) => hubLink.stream(open);
      sessions.opened(session, generation);
      try {
        await tools.connect(session.transport);
      } catch (err) {
        sessions.forget(session);
        throw err;
      }
      return session;
    };

    const sweep = setInterval(() => sessions.sweep(services.config.mcpSessionIdleMs), Math.min(60_000, services.config.mcpSessionIdleMs)).unref();

    app.addHook("onClose", async () => {
      clearInterval(sweep);
      services.agents.off("changed", onAgentsChanged);
      await modern?.close();
      await sessions.closeAll();
      answers.close();
    });

    // Listed in the OpenAPI document by name only: the bodies are JSON-RPC, and the MCP protocol
    // describes its own tools (tools/list), answering in its own error shape.
    const described = (summary: string) => ({
      summary,
      tags: ["mcp"],
      description: "MCP Streamable HTTP transport (JSON-RPC 2.0); connect an MCP client, see the README",
    });
    for (const method of ["GET", "POST", "DELETE"] as const) {
      app.route({
        method,
        url: "/mcp",
        schema: described("MCP: every agent's tools and the corral_* tools"),
        handler: (request, reply) => handle(request, reply, null),
      });
      app.route({
        method,
        url: "/mcp/:agent",
        schema: described("MCP: one agent's tools, named as in pyCorral"),
        handler: (request, reply) => handle(request, reply, (request.params as { agent: string }).agent),
      });
    }
  };
}
