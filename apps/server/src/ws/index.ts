import type { Server } from "node:http";
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
      "/api/ws",
      {
        websocket: true,
        schema: {
          summary: "The WebSocket: job list and job streams (messages are ClientMessage and ServerMessage in @corral/shared, see the README)",
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
