import type { FastifyInstance } from "fastify";
import {
  HubAgentListSchema,
  HubLeaveBodySchema,
  HubMessagePageSchema,
  HubMessageSchema,
  HubMessagesQuerySchema,
  HubReceivedSchema,
  HubReceiveBodySchema,
  HubRegisterBodySchema,
  HubRegistrationSchema,
  HubSendBodySchema,
  HubSessionListSchema,
  HubSessionNameSchema,
} from "@corral/shared";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import type { HubMember } from "../../conversations/hub-member.js";
import { notFound } from "../../lib/errors.js";
import type { Services } from "../../services.js";
import { BODY_ERRORS, errors } from "../contracts.js";

const SessionParamsSchema = z.object({ session: HubSessionNameSchema });
const tags = ["conversations"];

/**
 * Conversation sessions over REST: what the panel shows (sessions, agents, messages), and the
 * same part in a conversation the MCP tools give, for a client without MCP: register for a key
 * (the handle MCP tools take: the same registration), then send, receive and leave with it in the body.
 */
export function conversationRoutes(services: Services) {
  return async (fastify: FastifyInstance) => {
    const app = fastify.withTypeProvider<ZodTypeProvider>();
    const hub = services.conversations;

    /** The live agent with the request's key, in the session of the path (a call with the key renews its lease). */
    const memberOf = async (key: string, session: string): Promise<HubMember> => {
      const member = await hub.member(key, "key");
      if (member.session !== session) throw notFound(`the agent with this key is registered in another session, not ${session}`, "key");
      return member;
    };

    app.get(
      "/api/conversations",
      { schema: { summary: "Conversation sessions, the latest active first", tags, response: { 200: HubSessionListSchema, ...errors() } } },
      async () => ({ sessions: await hub.sessions() }),
    );

    app.get(
      "/api/conversations/:session/agents",
      {
        schema: {
          summary: "A session's agents: registered clients (online or not), then Corral's agents",
          tags,
          params: SessionParamsSchema,
          response: { 200: HubAgentListSchema, ...errors() },
        },
      },
      async (request) => ({ agents: await hub.agents(request.params.session) }),
    );

    app.get(
      "/api/conversations/:session/messages",
      {
        schema: {
          summary: "A session's messages after a cursor, oldest first (those from or to one agent with `agent`)",
          tags,
          params: SessionParamsSchema,
          querystring: HubMessagesQuerySchema,
          response: { 200: HubMessagePageSchema, ...errors(404) },
        },
      },
      async (request) => {
        const { session } = request.params;
        const { agent, cursor, limit } = request.query;
        if (agent !== undefined && !(await hub.knows(session, agent))) throw notFound(`no agent named ${agent} in session ${session}`, "agent");
        return hub.read(session, agent, cursor, limit);
      },
    );

    app.post(
      "/api/conversations/:session/agents",
      {
        schema: {
          summary:
            "Join a session as a REST client: the answer's key goes in the body of your later calls; with `server`, messages to you are posted into your OpenCode server's session",
          tags,
          params: SessionParamsSchema,
          body: HubRegisterBodySchema,
          response: { 201: HubRegistrationSchema, ...errors(409, 503, ...BODY_ERRORS) },
        },
      },
      async (request, reply) => {
        const { session } = request.params;
        const { name, label, key, server } = request.body;
        const { handle, row } = await hub.register(session, name, label ?? null, key, server);
        reply.code(201);
        const agent = {
          session,
          name,
          kind: "client" as const,
          label: row.label,
          online: true,
          registeredAt: row.registeredAt,
          lastSeenAt: row.lastSeenAt,
          liveAt: row.targetUrl,
        };
        return { agent, key: handle };
      },
    );

    app.post(
      "/api/conversations/:session/messages",
      {
        schema: {
          summary: "Send as your agent: into a client's inbox, or to one of Corral's agents as a job whose answer comes back as a message",
          tags,
          params: SessionParamsSchema,
          body: HubSendBodySchema,
          response: { 201: HubMessageSchema, ...errors(404, 409, 503, ...BODY_ERRORS) },
        },
      },
      async (request, reply) => {
        const { key, to, text } = request.body;
        const { live: _, ...message } = await hub.send(await memberOf(key, request.params.session), to, text, "rest");
        reply.code(201);
        return message;
      },
    );

    app.post(
      "/api/conversations/:session/receive",
      {
        schema: {
          summary: "Take your agent's waiting messages; when none wait, wait up to timeoutS for one (empty at the timeout)",
          tags,
          params: SessionParamsSchema,
          body: HubReceiveBodySchema,
          response: { 200: HubReceivedSchema, ...errors(404, 409, 503, ...BODY_ERRORS) },
        },
      },
      async (request, reply) => {
        const member = await memberOf(request.body.key, request.params.session);
        // A caller that hangs up takes nothing: what would have been its answer stays in the inbox.
        const gone = new AbortController();
        const onClose = () => {
          if (!reply.raw.writableFinished) gone.abort();
        };
        reply.raw.once("close", onClose);
        try {
          return { messages: await hub.receive(member, request.body.timeoutS * 1000, gone.signal) };
        } finally {
          reply.raw.off("close", onClose);
        }
      },
    );

    app.post(
      "/api/conversations/:session/leave",
      {
        schema: {
          summary: "Leave the session: the registration with this key ends",
          tags,
          params: SessionParamsSchema,
          body: HubLeaveBodySchema,
          response: { 204: z.undefined().describe("Left"), ...errors(404, ...BODY_ERRORS) },
        },
      },
      async (request, reply) => {
        await hub.leave(await memberOf(request.body.key, request.params.session));
        return reply.code(204).send();
      },
    );
  };
}
