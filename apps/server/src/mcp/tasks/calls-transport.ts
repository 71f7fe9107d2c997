import type { JSONRPCMessage, JSONRPCRequest, MessageExtraInfo, Transport, TransportSendOptions } from "@modelcontextprotocol/server";

/** What a `CallsTransport` does with the messages that pass it. */
export interface CallHooks {
  /** Answers a request here, before the server sees it; `undefined` passes it on to the server. */
  answer(request: JSONRPCRequest): Promise<JSONRPCMessage> | undefined;
  /** What the server sends, as the client is to get it. */
  outgoing?(message: JSONRPCMessage): JSONRPCMessage;
}

/**
 * Stands between a transport and its McpServer, so a call answered with a task never reaches the
 * McpServer's `tools/call` handler: that handler checks every result against CallToolResult, which
 * a task is not, in either revision.
 */
export class CallsTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  constructor(
    private readonly inner: Transport,
    private readonly hooks: CallHooks,
  ) {
    const closed = inner.onclose;
    inner.onclose = () => {
      closed?.();
      this.onclose?.();
    };
    const failed = inner.onerror;
    inner.onerror = (error) => {
      failed?.(error);
      this.onerror?.(error);
    };
    inner.onmessage = (message, extra) => this.receive(message, extra);
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.inner.send(this.hooks.outgoing ? this.hooks.outgoing(message) : message, options);
  }

  private receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    const answer = "method" in message && "id" in message ? this.hooks.answer(message) : undefined;
    if (!answer) return this.onmessage?.(message, extra);
    answer.then((reply) => this.inner.send(reply)).catch((err: unknown) => this.onerror?.(err instanceof Error ? err : new Error(String(err))));
  }
}
