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
 * that do. A connection is idle until its request (headers and body) has arrived, and again once
 * its answers have ended (keep-alive); the oldest idle one is closed when a new connection would pass
 * either cap, so a flood of half-sent requests (slowloris) costs its own connections, never the
 * next real request. Past the cap with no idle one, a connection whose client reads nothing is
 * closed instead: one holding answer bytes the client has not taken, the one that has waited
 * longest since its client last caught up (a flood of pipelined requests for a public file, never
 * read, fills the socket's buffers and keeps its connection busy for good). Connections busy with
 * a request, an event stream or a WebSocket whose client keeps up are never closed for room: with
 * neither kind left, the new connection is closed at once.
 * (Node's header timeout closes idle half-sent requests on its own, later.)
 */
export function limitConnections(server: Server, limits: ConnectionLimits): void {
  const open = new Set<Socket>();
  /** Idle connections, oldest first. */
  const idle = new Set<Socket>();
  /** Requests of each connection whose answer has not ended. */
  const busy = new WeakMap<Socket, number>();
  /** When each connection's client last took everything written to it (or connected). */
  const caughtUp = new WeakMap<Socket, number>();

  const evictOldestIdle = (): boolean => {
    const [oldest] = idle;
    if (!oldest) return false;
    idle.delete(oldest);
    oldest.destroy();
    return true;
  };

  const evictStuck = (): boolean => {
    let stuck: Socket | undefined;
    for (const socket of open) {
      // Bytes wait in the socket only when the kernel's buffers for it are full: its client is not reading.
      if (socket.writableLength === 0) continue;
      if (!stuck || (caughtUp.get(socket) ?? 0) < (caughtUp.get(stuck) ?? 0)) stuck = socket;
    }
    stuck?.destroy();
    return stuck !== undefined;
  };

  server.on("connection", (socket: Socket) => {
    if (open.size >= limits.maxConnections && !evictOldestIdle() && !evictStuck()) {
      socket.destroy();
      return;
    }
    open.add(socket);
    idle.add(socket);
    caughtUp.set(socket, Date.now());
    socket.on("drain", () => caughtUp.set(socket, Date.now()));
    socket.once("close", () => {
      open.delete(socket);
      idle.delete(socket);
    });
    if (idle.size > limits.maxIdle) evictOldestIdle();
  });
  server.on("request", (req, res) => {
    const { socket } = req;
    busy.set(socket, (busy.get(socket) ?? 0) + 1);
    let answered = false;
    // Busy once its body has arrived: a body that trickles in (a byte at a time, for the 5 minutes
    // a request may take) makes the server do nothing yet, and must not hold room for good.
    const working = () => {
      if (!answered) idle.delete(socket);
    };
    const hasBody = req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
    if (hasBody) req.once("end", working);
    else working();
    res.once("close", () => {
      answered = true;
      const left = (busy.get(socket) ?? 1) - 1;
      busy.set(socket, left);
      // Kept alive for a next request: idle again, and the newest idle.
      if (left === 0 && open.has(socket) && !socket.destroyed) idle.add(socket);
    });
  });
  // A WebSocket (or hot reload's socket) lives on past its request: never idle again.
  server.on("upgrade", (req) => idle.delete(req.socket));
}
