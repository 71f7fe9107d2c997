// A minimal MCP client over Streamable HTTP (a 2025-11-25 session: initialize, then calls; or
// 2026-07-28: each request on its own, with its `_meta`), written against the
// protocol with node:http so the figures measure Corral rather than a client library. The
// compatibility suite covers the real clients. `fetch` is not used: in Node 20 it adds about
// 0.1 ms to a GET and 0.2 ms to a POST with a body, which would hide the server's own cost;
// `httpGet` times baselines through the same connection pool, so both sides pay the same client.
import http from "node:http";

export interface CallResult {
  text: string;
  isError: boolean;
}

const PROTOCOL_VERSION = "2025-06-18";
const MODERN_VERSION = "2026-07-28";
const CLIENT_INFO = { name: "corral-bench", version: "1.0.0" };

/** One keep-alive pool for the MCP calls and the baselines they are compared with. */
const agent = new http.Agent({ keepAlive: true });

interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function request(url: string, method: string, headers: Record<string, string>, body?: string): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method, agent, headers: body === undefined ? headers : { ...headers, "content-length": String(Buffer.byteLength(body)) } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** GET `url` and read the whole answer: the HTTP round trip the MCP calls are compared with. */
export async function httpGet(url: string): Promise<string> {
  const res = await request(url, "GET", {});
  if (res.status !== 200) throw new Error(`GET ${url}: HTTP ${res.status}`);
  return res.body;
}

/** The JSON-RPC message with `id` from a JSON or SSE response body. */
function messageFrom(body: string, contentType: string, id: number): Record<string, unknown> {
  const candidates = contentType.includes("text/event-stream")
    ? body
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).trim())
    : [body];
  for (const raw of candidates) {
    if (!raw) continue;
    const msg = JSON.parse(raw) as Record<string, unknown>;
    if (msg.id === id) return msg;
  }
  throw new Error(`no JSON-RPC answer with id ${id} in: ${body.slice(0, 500)}`);
}

export class McpHttpClient {
  private nextId = 1;
  private sessionId = "";

  private constructor(
    private readonly url: string,
    private readonly token: string,
    private readonly modern = false,
  ) {}

  /** A 2026-07-28 client: no session; every request says its version, client and capabilities. */
  static async modern(url: string, token: string): Promise<McpHttpClient> {
    const client = new McpHttpClient(url, token, true);
    await client.rpc("server/discover");
    return client;
  }

  static async connect(url: string, token: string): Promise<McpHttpClient> {
    const client = new McpHttpClient(url, token);
    const init = await client.post({
      method: "initialize",
      params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: CLIENT_INFO },
    });
    if (init.status !== 200) throw new Error(`initialize failed: ${init.status} ${init.body}`);
    await client.post({ method: "notifications/initialized" }, false);
    return client;
  }

  private async post(message: Record<string, unknown>, withId = true) {
    const id = withId ? this.nextId++ : undefined;
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": this.modern ? MODERN_VERSION : PROTOCOL_VERSION,
      ...(this.sessionId ? { "mcp-session-id": this.sessionId } : {}),
    };
    if (this.modern) {
      const params = (message.params ?? {}) as Record<string, unknown>;
      headers["mcp-method"] = String(message.method);
      if (message.method === "tools/call") headers["mcp-name"] = String(params.name);
      message = {
        ...message,
        params: {
          ...params,
          _meta: {
            "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
            "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
            "io.modelcontextprotocol/clientCapabilities": {},
          },
        },
      };
    }
    const res = await request(this.url, "POST", headers, JSON.stringify({ jsonrpc: "2.0", ...(id === undefined ? {} : { id }), ...message }));
    const session = res.headers["mcp-session-id"];
    if (typeof session === "string") this.sessionId = session;
    return { status: res.status, id, body: res.body, contentType: res.headers["content-type"] ?? "" };
  }

  /** Any request with an id (`ping`, `tools/list`…); resolves with its `result`. */
  async rpc(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>> {
    const res = await this.post({ method, ...(params ? { params } : {}) });
    if (res.status !== 200) throw new Error(`${method}: HTTP ${res.status} ${res.body.slice(0, 300)}`);
    const msg = messageFrom(res.body, res.contentType, res.id!);
    if (msg.error) throw new Error(`${method}: ${JSON.stringify(msg.error)}`);
    return msg.result as Record<string, unknown>;
  }

  async callTool(name: string, args: Record<string, unknown>): Promise<CallResult> {
    const result = (await this.rpc("tools/call", { name, arguments: args })) as { content?: { type: string; text?: string }[]; isError?: boolean };
    return { text: (result.content ?? []).map((c) => c.text ?? "").join(""), isError: result.isError === true };
  }

  async close(): Promise<void> {
    if (!this.sessionId) return;
    await request(this.url, "DELETE", { authorization: `Bearer ${this.token}`, "mcp-session-id": this.sessionId });
  }
}
