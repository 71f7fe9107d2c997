import type { IncomingHttpHeaders } from "node:http";
import { createMcpHandler, isJsonContentType, type McpHttpHandler } from "@modelcontextprotocol/server";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { AgentRow } from "../db/schema.js";
import type { Services } from "../services.js";
import type { McpOutbox } from "./outbox.js";
import { createMcpServer } from "./server-factory.js";
import type { McpMount } from "./toolsets.js";
import type { McpShared } from "./tools/mcp-shared.js";
import { sendWebResponse } from "./web-response.js";

/**
 * MCP 2026-07-28 on the same URLs as the 2025-11-25 sessions: each request carries its protocol
 * version, client and capabilities in its `_meta`, and is answered by a server instance made for
 * it alone (the SDK's `createMcpHandler`: `server/discover`, the per-request version and
 * capability checks, `-32022` for a version it does not serve, the `Mcp-Method`/`Mcp-Name`
 * header checks, `resultType`). Nothing lives between requests but what the registry holds.
 */
export class ModernMcp {
  private readonly handler: McpHttpHandler;
  /** Requests being answered: each holds a server instance with every tool of its mount. */
  private inFlight = 0;

  constructor(
    private readonly services: Services,
    shared: McpShared,
    private readonly enabledAgents: () => Promise<{ rows: AgentRow[] }>,
    private readonly outbox: McpOutbox,
    /** Where a failure inside the SDK's handling is told (the client is answered an error). */
    onError: (err: Error) => void,
  ) {
    this.handler = createMcpHandler(
      async ({ requestInfo }) => {
        // Only requests this class was handed reach here, each with the mount `serve` put on it.
        const mount = requestInfo ? mounts.get(requestInfo) : undefined;
        if (!mount) throw new Error("an MCP request reached the 2026-07-28 handler without its mount");
        const { rows } = await this.enabledAgents();
        return createMcpServer(services, mount, rows, shared, "modern").server;
      },
      { legacy: "reject", onerror: onError },
    );
  }

  /**
   * As many requests at once as 2025-11-25 sessions may hold calls: a client that opens requests
   * without end holds a bounded share of the server, as one that opens sessions does.
   */
  private get maxInFlight(): number {
    const { mcpMaxSessions, mcpMaxCallsPerSession } = this.services.config;
    return mcpMaxSessions * mcpMaxCallsPerSession;
  }

  /** Tells clients listening on `subscriptions/listen` that the tools changed (an agent was added, changed or removed). */
  toolsChanged(): void {
    this.handler.notify.toolsChanged();
  }

  async serve(request: FastifyRequest, reply: FastifyReply, mount: McpMount): Promise<void> {
    if (request.method === "POST" && !isJsonContentType(request.headers["content-type"])) {
      return void reply
        .code(415)
        .send({ jsonrpc: "2.0", error: { code: -32000, message: "Unsupported Media Type: Content-Type must be application/json" }, id: null });
    }
    if (this.inFlight >= this.maxInFlight) {
      return void reply
        .code(503)
        .header("retry-after", "5")
        .send({
          jsonrpc: "2.0",
          error: {
            code: -32000,
            message: `too many MCP requests at once: ${this.inFlight} are being answered, at most ${this.maxInFlight} (CORRAL_MCP_MAX_SESSIONS × CORRAL_MCP_MAX_CALLS_PER_SESSION); wait for an answer, or raise those settings`,
          },
          id: null,
        });
    }
    this.inFlight++;
    try {
      await this.answer(request, reply, mount);
    } finally {
      this.inFlight--;
    }
  }

  private async answer(request: FastifyRequest, reply: FastifyReply, mount: McpMount): Promise<void> {
    // A client that leaves (or closes the stream: 2026-07-28's cancel) ends the request's instance.
    const left = new AbortController();
    reply.raw.once("close", () => {
      if (!reply.raw.writableFinished) left.abort();
    });
    const webRequest = new Request(`http://corral${request.url}`, {
      method: request.method,
      headers: webHeaders(request.headers),
      signal: left.signal,
    });
    mounts.set(webRequest, mount);
    const response = await this.handler.fetch(webRequest, { parsedBody: request.body });
    reply.hijack();
    await sendWebResponse(response, reply.raw, this.outbox);
  }

  close(): Promise<void> {
    return this.handler.close();
  }
}

/** The mount each request was served for: the SDK hands the factory the request, not the route. */
const mounts = new WeakMap<Request, McpMount>();

function webHeaders(headers: IncomingHttpHeaders): Headers {
  const out = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) out.append(name, v);
  }
  return out;
}
