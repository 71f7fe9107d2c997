// A loopback pass-through proxy that adds one header to every request. MCP Inspector 0.15.0 (the
// last release that runs on Node 20) has no way to send headers from its CLI, so this stands in
// for the `--header` flag later releases have. Bodies and SSE responses stream through untouched.
import { createServer, request as httpRequest } from "node:http";
import { listenOnLoopback } from "../../test/fixtures/loopback.js";

export interface HeaderProxy {
  url: string;
  /** Requests that went through, as `METHOD path`. */
  seen: string[];
  close(): Promise<void>;
}

export function startHeaderProxy(target: string, header: { name: string; value: string }): Promise<HeaderProxy> {
  const upstream = new URL(target);
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const headers = { ...req.headers, host: upstream.host, [header.name.toLowerCase()]: header.value };
    const forward = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on("error", (err) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(`proxy: ${err.message}`);
    });
    req.pipe(forward);
  });
  return listenOnLoopback(server).then((listening) => ({ ...listening, seen }));
}
