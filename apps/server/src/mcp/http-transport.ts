import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  isInitializeRequest,
  isJsonContentType,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
  parseJSONRPCMessage,
  type RequestId,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Transport,
  type TransportSendOptions,
} from "@modelcontextprotocol/server";
import type { McpOutbox } from "./outbox.js";

/** The revision that removed JSON-RPC batches from MCP: a client that speaks it (or a later one) sends none. */
const NO_BATCHES_SINCE = "2025-06-18";
/**
 * Why a request's work is abandoned when its client leaves before the answer: a call that started
 * something durable (a job) keeps it, since the spec does not read a lost connection as a cancel.
 */
export const CLIENT_LEFT = "the client's connection closed before the answer";
/** A comment on an open event stream this often, so proxies and clients' idle timeouts leave it be (the SDK's interval). */
const KEEP_ALIVE_MS = 15_000;
const SSE_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache, no-transform",
  connection: "keep-alive",
  "x-accel-buffering": "no",
};

/** One POST with requests in it, until every request in it is answered or the client leaves. */
interface Exchange {
  res: ServerResponse;
  /** Its requests not answered yet. */
  pending: Set<RequestId>;
  /** Answers held for one JSON body while it is not an event stream. */
  answers: JSONRPCMessage[];
  batch: boolean;
  /** The turn after which it becomes an event stream, unless answered by then. */
  turn?: NodeJS.Immediate;
  sse: boolean;
  keepAlive?: NodeJS.Timeout;
  finish(): void;
}

/**
 * MCP Streamable HTTP on Node's own request and response, for one session: the SDK's `Server`
 * speaks through it by the SDK's `Transport` interface, and it follows the SDK's transport
 * (status codes, error shapes, headers, one GET stream per session). The SDK's own transport is
 * written against web-standard Request, Response and ReadableStream: on Node that is a Request,
 * a Response, a stream and a keep-alive timer built per request, and zod parses of each message
 * to tell requests from answers, about as much CPU as the rest of a `_done` call. Here an answer ready within the turn the request arrived
 * in (a ping, a `_done`, a list) leaves as one `application/json` body in one write. A request
 * still unanswered after that turn (a `_run`, a `corral_wait`) gets an event stream instead: its
 * headers go at once, so no client's header timeout runs out, then its progress as it comes, its
 * answer last. The spec lets the server choose either when the client accepts both.
 */
export class NodeStreamableHttpTransport implements Transport {
  sessionId?: string;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  /** The session's GET stream opened (true) or closed (false): what keeps its hub registrations online. */
  onstream?: (open: boolean) => void;
  private exchanges = new Map<RequestId, Exchange>();
  private open = new Set<Exchange>();
  /** The GET stream: server-initiated messages (tools/list_changed). */
  private standalone?: { res: ServerResponse; keepAlive: NodeJS.Timeout };
  private closed = false;

  /**
   * `maxCalls`: the session's requests answered at once (a batch counts each of its requests);
   * `outbox`: where what waits for a slow reader is counted against the server's cap.
   */
  constructor(
    private readonly onInitialized: (sessionId: string) => void,
    private readonly limits: { maxCalls: number; outbox: McpOutbox },
  ) {}

  async start(): Promise<void> {}

  /** Answers one request of the session; resolves once its response has ended or the client left. */
  async handleRequest(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    if (this.closed) return this.refuse(res, 404, -32001, "Session not found");
    if (req.method === "POST") return this.post(req, res, body);
    if (req.method === "GET") return this.get(req, res);
    return this.delete(req, res);
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    // The SDK's isJSONRPC… guards parse the message again with zod (a failed parse builds its
    // issues): what the Server hands over is well formed, so its shape says what it is.
    const isAnswer = "result" in message || "error" in message;
    const requestId = isAnswer ? message.id : options?.relatedRequestId;
    if (requestId === undefined) {
      // Nothing is stored for a later GET stream: without one, the client hears of nothing (as with the SDK's transport).
      if (this.standalone) this.notify(this.standalone.res, event(message));
      return;
    }
    const exchange = this.exchanges.get(requestId);
    if (!exchange) throw new Error(`No connection established for request ID: ${String(requestId)}`);
    if (!isAnswer) {
      // Progress (or any message about the request) must reach the client before the answer.
      if (!exchange.sse) this.toStream(exchange);
      this.notify(exchange.res, event(message));
      return;
    }
    exchange.pending.delete(requestId);
    this.exchanges.delete(requestId);
    if (exchange.sse) {
      if (exchange.pending.size) this.write(exchange.res, event(message));
      else this.end(exchange, event(message));
      return;
    }
    exchange.answers.push(message);
    if (exchange.pending.size) return;
    const answer = JSON.stringify(exchange.batch ? exchange.answers : exchange.answers[0]);
    exchange.res.writeHead(200, this.headers(jsonHeaders(answer)));
    this.end(exchange, answer);
  }

  /**
   * Writes a server notification on the session's GET stream now, past the SDK: true only when it
   * was handed to the connection — false without a stream, or with one whose client has not read
   * what was sent (the caller keeps what it could not write, rather than it being skipped).
   */
  pushOnStream(message: JSONRPCMessage): boolean {
    const res = this.standalone?.res;
    if (!res || res.destroyed || res.writableNeedDrain) return false;
    this.write(res, event(message));
    return !res.destroyed;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const exchange of [...this.open]) {
      if (!exchange.sse) this.toStream(exchange);
      this.end(exchange);
    }
    this.standalone?.res.end();
    this.onclose?.();
  }

  private async post(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const accept = req.headers.accept;
    if (!accept?.includes("application/json") || !accept.includes("text/event-stream")) {
      return this.refuse(res, 406, -32000, "Not Acceptable: Client must accept both application/json and text/event-stream");
    }
    if (!isJsonContentType(req.headers["content-type"])) {
      return this.refuse(res, 415, -32000, "Unsupported Media Type: Content-Type must be application/json");
    }
    const batch = Array.isArray(body);
    if (batch) {
      const version = req.headers["mcp-protocol-version"];
      if (typeof version === "string" && version >= NO_BATCHES_SINCE) {
        return this.refuse(
          res,
          400,
          -32600,
          `Invalid Request: MCP ${version} has no JSON-RPC batches (removed in ${NO_BATCHES_SINCE}); send one message per POST`,
        );
      }
      if (body.length > this.limits.maxCalls) {
        return this.refuse(
          res,
          400,
          -32600,
          `Invalid Request: a batch holds at most ${this.limits.maxCalls} messages (CORRAL_MCP_MAX_CALLS_PER_SESSION)`,
        );
      }
    }
    let messages: JSONRPCMessage[];
    try {
      messages = batch ? body.map((m) => parseJSONRPCMessage(m)) : [parseJSONRPCMessage(body)];
    } catch {
      return this.refuse(res, 400, -32700, "Parse error: Invalid JSON-RPC message");
    }
    if (messages.some((m) => isRequest(m) && m.method === "initialize" && isInitializeRequest(m))) {
      if (this.sessionId !== undefined) return this.refuse(res, 400, -32600, "Invalid Request: Server already initialized");
      if (messages.length > 1) return this.refuse(res, 400, -32600, "Invalid Request: Only one initialization request is allowed");
      this.sessionId = randomUUID();
      this.onInitialized(this.sessionId);
    } else if (!this.validSession(req, res)) return;

    // The SDK can hand handlers a web-standard Request; none of Corral's reads it, so none is built.
    const extra: MessageExtraInfo = {};
    const requests = messages.filter(isRequest);
    const refused = this.callsRefusal(requests);
    if (refused) return this.refuse(res, ...refused);
    if (!requests.length) {
      // Only notifications or answers: nothing to send back.
      for (const message of messages) this.onmessage?.(message, extra);
      res.writeHead(202).end();
      return;
    }
    let finish = () => {};
    const done = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const exchange: Exchange = { res, pending: new Set(), answers: [], batch, sse: false, finish };
    for (const request of requests) {
      exchange.pending.add(request.id);
      this.exchanges.set(request.id, exchange);
    }
    this.open.add(exchange);
    exchange.turn = setImmediate(() => this.toStream(exchange));
    try {
      for (const message of messages) this.onmessage?.(message, extra);
    } catch (err) {
      // The caller answers the error: nothing of the exchange may write to the response after it.
      this.forget(exchange, false);
      throw err;
    }
    return done;
  }

  private get(req: IncomingMessage, res: ServerResponse): Promise<void> | undefined {
    if (!req.headers.accept?.includes("text/event-stream")) {
      return this.refuse(res, 406, -32000, "Not Acceptable: Client must accept text/event-stream");
    }
    if (!this.validSession(req, res)) return;
    if (this.standalone) return this.refuse(res, 409, -32000, "Conflict: Only one SSE stream is allowed per session");
    res.writeHead(200, this.headers(SSE_HEADERS));
    // Headers at once: the first event may be minutes away.
    res.flushHeaders();
    const standalone = { res, keepAlive: this.keepAlive(res) };
    this.standalone = standalone;
    this.onstream?.(true);
    return new Promise((resolve) =>
      res.once("close", () => {
        clearInterval(standalone.keepAlive);
        if (this.standalone === standalone) {
          this.standalone = undefined;
          this.onstream?.(false);
        }
        resolve();
      }),
    );
  }

  private async delete(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!this.validSession(req, res)) return;
    res.writeHead(200).end();
    await this.close();
  }

  /** The checks every request but initialize passes; answers the error itself when one fails. */
  private validSession(req: IncomingMessage, res: ServerResponse): boolean {
    const refused = this.sessionRefusal(req);
    if (refused) this.refuse(res, ...refused);
    return !refused;
  }

  private sessionRefusal(req: IncomingMessage): [status: number, code: number, message: string] | undefined {
    if (this.sessionId === undefined) return [400, -32000, "Bad Request: Server not initialized"];
    const id = req.headers["mcp-session-id"];
    if (!id) return [400, -32000, "Bad Request: Mcp-Session-Id header is required"];
    if (id !== this.sessionId) return [404, -32001, "Session not found"];
    const version = req.headers["mcp-protocol-version"];
    if (typeof version === "string" && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      return [400, -32000, `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")})`];
    }
    return undefined;
  }

  /**
   * Why these requests cannot be taken now: the session answers at most `maxCalls` at once, so a
   * client that posts calls without reading the answers holds a bounded share of the server; and
   * an id already waiting for its answer would have two answers for one.
   */
  private callsRefusal(requests: JSONRPCRequest[]): [status: number, code: number, message: string] | undefined {
    const ids = new Set<RequestId>();
    for (const { id } of requests) {
      if (ids.has(id) || this.exchanges.has(id))
        return [400, -32600, `Invalid Request: request id ${JSON.stringify(id)} is already waiting for its answer`];
      ids.add(id);
    }
    const { maxCalls } = this.limits;
    if (this.exchanges.size + requests.length > maxCalls) {
      return [
        429,
        -32000,
        `Too many calls: this session is answering ${this.exchanges.size} and takes at most ${maxCalls} at once (CORRAL_MCP_MAX_CALLS_PER_SESSION); wait for an answer, or use another session`,
      ];
    }
    return undefined;
  }

  /** The exchange goes on as an event stream: its headers and the answers it holds leave now. */
  private toStream(exchange: Exchange): void {
    clearImmediate(exchange.turn);
    exchange.sse = true;
    const { res } = exchange;
    res.writeHead(200, this.headers(SSE_HEADERS));
    res.flushHeaders();
    for (const answer of exchange.answers) this.write(res, event(answer));
    // A client that leaves frees the stream; answers for it then have nowhere to go.
    if (res.destroyed) return this.end(exchange);
    exchange.keepAlive = this.keepAlive(res);
    res.once("close", () => this.end(exchange));
  }

  private end(exchange: Exchange, last?: string): void {
    if (!this.forget(exchange)) return;
    // The last event and the end of the body leave in one write.
    exchange.res.end(last);
    this.limits.outbox.wrote(exchange.res);
    exchange.finish();
  }

  /**
   * Stops tracking an exchange; false if it was no longer tracked. Requests still unanswered are
   * cancelled in the server (`tellServer`) as the client's `notifications/cancelled` would: their
   * tools see `extra.signal` abort (with `CLIENT_LEFT`), and the SDK builds no answer for them.
   */
  private forget(exchange: Exchange, tellServer = true): boolean {
    if (!this.open.delete(exchange)) return false;
    clearImmediate(exchange.turn);
    clearInterval(exchange.keepAlive);
    for (const id of exchange.pending) {
      this.exchanges.delete(id);
      if (tellServer) this.onmessage?.({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason: CLIENT_LEFT } });
    }
    return true;
  }

  /** An answer: it must leave, and the outbox drops the connection if too much waits for the client. */
  private write(res: ServerResponse, chunk: string): void {
    res.write(chunk);
    this.limits.outbox.wrote(res);
  }

  /** Progress, a notification, a keep-alive: skipped while the client has not read what was sent. */
  private notify(res: ServerResponse, chunk: string): void {
    if (!res.writableNeedDrain) this.write(res, chunk);
  }

  /** Writes an SSE comment every `KEEP_ALIVE_MS` until cleared; it does not keep the process alive. */
  private keepAlive(res: ServerResponse): NodeJS.Timeout {
    return setInterval(() => this.notify(res, ": keepalive\n\n"), KEEP_ALIVE_MS).unref();
  }

  private headers(headers: Record<string, string>): Record<string, string> {
    return this.sessionId === undefined ? headers : { ...headers, "mcp-session-id": this.sessionId };
  }

  /** Answers a JSON-RPC error with no id, in the SDK's transport's shape. */
  private refuse(res: ServerResponse, status: number, code: number, message: string): undefined {
    this.onerror?.(new Error(message));
    const body = JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null });
    res.writeHead(status, jsonHeaders(body)).end(body);
    return undefined;
  }
}

/** With its length given, a JSON body leaves with its headers in one write, without chunk framing. */
function jsonHeaders(body: string): Record<string, string> {
  return { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) };
}

/** A message JSONRPCMessageSchema has passed is a request when it has both a method and an id. */
function isRequest(message: JSONRPCMessage): message is JSONRPCRequest {
  return "method" in message && "id" in message;
}

function event(message: JSONRPCMessage): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}
