import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import websocket from "@fastify/websocket";
import { WsStatsSchema } from "@corral/shared";
import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { errors } from "../routes/contracts.js";
import type { Services } from "../services.js";
import { WsHub } from "./hub.js";

/** Client messages are small; anything bigger is a mistake or an attack. */
const MAX_CLIENT_MESSAGE = 64 * 1024;

/** The one WebSocket endpoint. */
const WS_PATH = "/api/ws";

/**
 * Whether an upgrade is for `/api/ws`, the only route that takes one. Any other goes no further:
 * @fastify/websocket accepts an upgrade on every GET route (101, then a close frame and up to
 * 30 s waiting for the client's), so a client without the token upgrading the panel's `/` or
 * `/api/health` would hold connections that are never idle and starve everyone else.
 */
export function isWebsocketUpgrade(request: IncomingMessage): boolean {
  try {
    return new URL(request.url ?? "", "http://localhost").pathname === WS_PATH;
  } catch {
    return false;
  }
}

/** Answers an upgrade no route takes with 404 and closes its socket once that is written. */
export function refuseUpgrade(socket: Duplex): void {
  const body = JSON.stringify({ error: `no WebSocket here; the WebSocket is ${WS_PATH}`, code: "not_found" });
  socket.on("error", () => socket.destroy());
  socket.end(
    `HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    () => socket.destroy(),
  );
}

/**
 * Upgrade handling for the whole app, fed the upgrades app.ts routes to Fastify. Registered
 * before the guard: its hooks must see every upgrade request, so that a refused one (401, 403)
 * has its socket closed, not left dangling.
 */
export async function registerWebsocket(app: FastifyInstance, upgrades: Server): Promise<void> {
  await app.register(websocket, { options: { maxPayload: MAX_CLIENT_MESSAGE, server: upgrades } });
}

/**
 * `/api/ws`: the one WebSocket endpoint (the guard checks token, Host and Origin on the upgrade
 * like on any request), and `/api/ws/stats` to see who is connected and how far behind.
 */
export function wsRoutes(services: Services) {
  return async (fastify: FastifyInstance) => {
    const app = fastify.withTypeProvider<ZodTypeProvider>();
    const hub = new WsHub(services, app.log);
    app.get(
      WS_PATH,
      {
        websocket: true,
        schema: {
          summary: "The WebSocket: job list and job streams (messages are ClientMessage and ServerMessage in @corral/shared, see docs/api.md)",
          tags: ["websocket"],
          response: { 101: z.undefined().describe("Switching Protocols: the socket is open"), ...errors() },
        },
      },
      (socket) => hub.connect(socket),
    );
    app.get(
      "/api/ws/stats",
      {
        schema: {
          summary: "Who is connected to the WebSocket and how far behind",
          tags: ["websocket"],
          response: { 200: WsStatsSchema, ...errors() },
        },
      },
      async () => hub.stats(),
    );
    app.addHook("preClose", async () => hub.close());
  };
}
