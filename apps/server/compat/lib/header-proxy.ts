// A loopback pass-through proxy that adds one header to every request. MCP Inspector 0.15.0 (the
// last release that runs on Node 20) has no way to send headers from its CLI, so this stands in
// for the `--header` flag later releases have. Bodies and SSE responses stream through untouched.
// It also records what each request was in MCP terms, so a test can tell which era a client spoke.
import { createServer, request as httpRequest } from "node:http";
import { listenOnLoopback } from "../../test/fixtures/loopback.js";

/** One request through the proxy: its MCP method and protocol version headers (2026-07-28 sends both), and the answer's status. */
export interface Exchange {
  request: string;
  mcpMethod?: string;
  protocolVersion?: string;
  status: number;
  /** When the request came in and when its answer ended or its connection closed (ms since the epoch): a GET event stream's lifetime. */
  startedAt: number;
  endedAt?: number;
}

export interface HeaderProxy {
  url: string;
  /** Requests that went through, as `METHOD path`. */
  seen: string[];
  exchanges: Exchange[];
  close(): Promise<void>;
}

/** `header`: the header added to every request; none, and the proxy only records. */
export function startHeaderProxy(target: string, header?: { name: string; value: string }): Promise<HeaderProxy> {
  const upstream = new URL(target);
  const seen: string[] = [];
  const exchanges: Exchange[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const startedAt = Date.now();
    const headers = { ...req.headers, host: upstream.host, ...(header ? { [header.name.toLowerCase()]: header.value } : {}) };
    const forward = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers }, (answer) => {
      const one = (name: string) => (typeof req.headers[name] === "string" ? (req.headers[name] as string) : undefined);
      const exchange: Exchange = {
        request: `${req.method} ${req.url}`,
        mcpMethod: one("mcp-method"),
        protocolVersion: one("mcp-protocol-version"),
        status: answer.statusCode ?? 0,
        startedAt,
      };
      exchanges.push(exchange);
      res.once("close", () => {
        exchange.endedAt = Date.now();
        // The client went away mid-answer (a GET stream it dropped): drop the upstream one too, so the server sees it go.
        if (!answer.complete) answer.destroy();
      });
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on("error", (err) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(`proxy: ${err.message}`);
    });
    req.pipe(forward);
  });
  return listenOnLoopback(server).then((listening) => ({ ...listening, seen, exchanges }));
}
