import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { TASKS_EXTENSION_ID_V2 } from "@modelcontextprotocol/ext-tasks/core/v2";
import type { TestServer } from "./helpers.js";

/**
 * The Tasks extension of MCP 2026-07-28 (`io.modelcontextprotocol/tasks`) as a client speaks it.
 * The SDK client refuses a `tools/call` answered with `resultType: "task"` (it knows only the core
 * result types), so such calls go out raw, over HTTP, as ext-tasks' own requester asks its host
 * to do (`rawDispatch`); their answers are checked against ext-tasks' generated wire schemas.
 */

const PROTOCOL_VERSION = "2026-07-28";
const CLIENT_INFO = { name: "corral-test", version: "1.0.0" };
export const WITH_TASKS = { extensions: { [TASKS_EXTENSION_ID_V2]: {} } };

/** A JSON-RPC error as it came over the wire. */
export interface WireError {
  code: number;
  message: string;
  data?: unknown;
}

export type WireAnswer = { kind: "result"; result: unknown } | { kind: "error"; error: WireError };

let nextId = 1;

/** One 2026-07-28 request, raw: its envelope declares `capabilities`; the `Mcp-*` headers the spec asks of it. */
export async function rawRequest(
  server: Pick<TestServer, "url" | "auth">,
  mountPath: string,
  request: { method: string; params?: Record<string, unknown>; id?: string | number },
  capabilities: Record<string, unknown> = WITH_TASKS,
): Promise<WireAnswer> {
  const params = request.params ?? {};
  const meta = (params._meta as Record<string, unknown> | undefined) ?? {};
  const body = {
    jsonrpc: "2.0",
    id: request.id ?? nextId++,
    method: request.method,
    params: {
      ...params,
      _meta: {
        ...meta,
        "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
      },
    },
  };
  const name = typeof params.name === "string" ? params.name : typeof params.taskId === "string" ? params.taskId : undefined;
  const res = await fetch(`${server.url}${mountPath}`, {
    method: "POST",
    headers: {
      ...server.auth,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": PROTOCOL_VERSION,
      "mcp-method": request.method,
      ...(name === undefined ? {} : { "mcp-name": name }),
    },
    body: JSON.stringify(body),
  });
  const message = await answerOf(res, body.id);
  return "error" in message ? { kind: "error", error: message.error as WireError } : { kind: "result", result: message.result };
}

/** The response to request `id`, whether it came as JSON or as the last event of a stream. */
async function answerOf(res: Response, id: string | number): Promise<{ result?: unknown; error?: unknown }> {
  const text = await res.text();
  if (!(res.headers.get("content-type") ?? "").startsWith("text/event-stream")) return JSON.parse(text);
  for (const event of text.split("\n\n")) {
    const data = event
      .split("\n")
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).trim())
      .join("\n");
    if (!data) continue;
    const message = JSON.parse(data) as { id?: unknown; result?: unknown; error?: unknown };
    if (message.id === id && ("result" in message || "error" in message)) return message;
  }
  throw new Error(`no answer to request ${id} in: ${text.slice(0, 500)}`);
}

/** The official SDK client pinned to 2026-07-28, declaring (or not) the Tasks extension on every request. */
export async function connectModern(server: Pick<TestServer, "url" | "auth">, mountPath: string, extension: boolean): Promise<Client> {
  const client = new Client(CLIENT_INFO, {
    versionNegotiation: { mode: { pin: PROTOCOL_VERSION } },
    ...(extension ? { capabilities: WITH_TASKS } : {}),
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}${mountPath}`), { requestInit: { headers: server.auth } }));
  return client;
}

/** The framing ext-tasks' requester puts on each of its raw requests. */
export const FRAMING = { protocolVersion: PROTOCOL_VERSION, clientInfo: CLIENT_INFO, clientCapabilities: WITH_TASKS };
