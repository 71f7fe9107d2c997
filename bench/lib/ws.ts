// The `ws` client the server itself depends on (the repo root has no copy), for benchmarks that
// speak the WebSocket.
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export interface BenchSocket {
  on(event: "message", cb: (data: Buffer) => void): void;
  once(event: "open" | "error", cb: (err?: Error) => void): void;
  send(data: string): void;
  close(): void;
}

export const WebSocket = createRequire(path.join(repo, "apps/server/package.json"))("ws") as new (
  url: string,
  options: { headers: Record<string, string> },
) => BenchSocket;
