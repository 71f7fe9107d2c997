// A minimal MCP client over Streamable HTTP (initialize, then tools/call), written against the
// protocol with fetch so the figures measure Corral rather than a client library. The compat suite
// covers the real clients.

export interface CallResult {
  text: string;
  isError: boolean;
}

const PROTOCOL_VERSION = "2025-06-18";

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
  ) {}

  static async connect(url: string, token: string): Promise<McpHttpClient> {
    const client = new McpHttpClient(url, token);
    const init = await client.post({
      method: "initialize",
      params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "corral-bench", version: "1.0.0" } },
    });
    if (!init.ok) throw new Error(`initialize failed: ${init.status}`);
    await client.post({ method: "notifications/initialized" }, false);
    return client;
  }

  private async post(message: Record<string, unknown>, withId = true) {
    const id = withId ? this.nextId++ : undefined;
    const res = await fetch(this.url, {
      method: "POST",
      headers: {
        authorization: `Bearer ${this.token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": PROTOCOL_VERSION,
        ...(this.sessionId ? { "mcp-session-id": this.sessionId } : {}),
      },
      body: JSON.stringify({ jsonrpc: "2.0", ...(id === undefined ? {} : { id }), ...message }),
    });
    const session = res.headers.get("mcp-session-id");
    if (session) this.sessionId = session;
    const body = await res.text();
    return { ok: res.ok, status: res.status, id, body, contentType: res.headers.get("content-type") ?? "" };
  }

  async callTool(name: string, args: Record<string, unknown>): Promise<CallResult> {
    const res = await this.post({ method: "tools/call", params: { name, arguments: args } });
    if (!res.ok) throw new Error(`tools/call ${name}: HTTP ${res.status} ${res.body.slice(0, 300)}`);
    const msg = messageFrom(res.body, res.contentType, res.id!);
    if (msg.error) throw new Error(`tools/call ${name}: ${JSON.stringify(msg.error)}`);
    const result = msg.result as { content?: { type: string; text?: string }[]; isError?: boolean };
    return { text: (result.content ?? []).map((c) => c.text ?? "").join(""), isError: result.isError === true };
  }

  async close(): Promise<void> {
    if (!this.sessionId) return;
    await fetch(this.url, { method: "DELETE", headers: { authorization: `Bearer ${this.token}`, "mcp-session-id": this.sessionId } });
  }
}
