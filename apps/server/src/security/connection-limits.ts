import type { Server } from "node:http";
import type { Socket } from "node:net";

export interface ConnectionLimits {
  /** Connections held at once: kept under the process's file-descriptor limit (see config.ts). */
  maxConnections: number;
  /** Of those, connections with no request in progress (not sent yet, or idle between requests). */
  maxIdle: number;
}

/**
 * Caps the connections the server holds so that connections that do nothing cannot starve those
 * that do. A connection is idle until its request's headers have arrived, and again once its
 * answers have ended (keep-alive); the oldest idle one is closed when a new connection would pass
 * either cap, so a flood of half-sent requests (slowloris) costs its own connections, never the
 * next real request. Connections busy with a request, an event stream or a WebSocket are never
 * closed for room: past the cap with no idle one left, the new connection is closed at once.
 * (Node's header timeout closes idle half-sent requests on its own, later.)
 */
export function limitConnections(server: Server, limits: ConnectionLimits): void {
  const open = new Set<Socket>();
  /** Idle connections, oldest first. */
  const idle = new Set<Socket>();
  /** Requests of each connection whose answer has not ended. */
  const busy = new WeakMap<Socket, number>();

  const evictOldestIdle = (): boolean => {
    const [oldest] = idle;
    if (!oldest) return false;
    idle.delete(oldest);
    oldest.destroy();
    return true;
  };

  server.on("connection", (socket: Socket) => {
    if (open.size >= limits.maxConnections && !evictOldestIdle()) {
      socket.destroy();
      return;
    }
    open.add(socket);
    idle.add(socket);
    socket.once("close", () => {
      open.delete(socket);
      idle.delete(socket);
    });
    if (idle.size > limits.maxIdle) evictOldestIdle();
  });
  server.on("request", (req, res) => {
    const { socket } = req;
    idle.delete(socket);
    busy.set(socket, (busy.get(socket) ?? 0) + 1);
    res.once("close", () => {
      const left = (busy.get(socket) ?? 1) - 1;
      busy.set(socket, left);
      // Kept alive for a next request: idle again, and the newest idle.
      if (left === 0 && open.has(socket) && !socket.destroyed) idle.add(socket);
    });
  });
  // A WebSocket (or hot reload's socket) lives on past its request: never idle again.
  server.on("upgrade", (req) => idle.delete(req.socket));
}
