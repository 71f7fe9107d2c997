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
import { MAX_REST_MEMBERS, RestMembers } from "../../conversations/rest-members.js";
import { notFound, ServiceError } from "../../lib/errors.js";
import type { Services } from "../../services.js";
import { BODY_ERRORS, errors } from "../contracts.js";

const SessionParamsSchema = z.object({ session: HubSessionNameSchema });
const tags = ["conversations"];

/**
 * Conversation sessions over REST: what the panel shows (sessions, agents, messages), and the
 * same part in a conversation the MCP tools give, for a client without MCP: register for a key,
 * then send, receive and leave with it in the body.
 */
export function conversationRoutes(services: Services) {
  return async (fastify: FastifyInstance) => {
    const app = fastify.withTypeProvider<ZodTypeProvider>();
    const hub = services.conversations;
    const members = new RestMembers(hub, services.config.mcpSessionIdleMs);
    app.addHook("onClose", async () => members.close());
    /** Registrations being stored: they count against MAX_REST_MEMBERS already. */
    let registering = 0;

    /** The live REST agent with the request's key, in the session of the path. */
    const memberOf = (key: string, session: string): HubMember => {
      const member = members.get(key);
      if (!member || member.session !== session) {
        throw notFound(`no agent with this key in session ${session}: it left or expired; register again`, "key");
      }
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
          summary: "Join a session as a REST client: the answer's key goes in the body of your later calls",
          tags,
          params: SessionParamsSchema,
          body: HubRegisterBodySchema,
          response: { 201: HubRegistrationSchema, ...errors(409, 503, ...BODY_ERRORS) },
        },
      },
      async (request, reply) => {
        if (members.size + registering >= MAX_REST_MEMBERS) {
          throw new ServiceError(`${MAX_REST_MEMBERS} REST agents are registered already; end one (DELETE) or wait for one to expire`, 503);
        }
        const { session } = request.params;
        const { name, label } = request.body;
        registering++;
        let member: HubMember;
        try {
          member = await hub.register(session, name, label ?? null, "rest");
        } finally {
          registering--;
        }
        const key = members.add(member);
        reply.code(201);
        const agent = {
          session,
          name,
          kind: "client" as const,
          label: member.label,
          online: true,
          registeredAt: member.registeredAt,
          lastSeenAt: member.lastSeenAt,
        };
        return { agent, key };
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
        const message = await hub.send(memberOf(key, request.params.session), to, text);
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
        const member = memberOf(request.body.key, request.params.session);
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
        memberOf(request.body.key, request.params.session);
        await members.remove(request.body.key);
        return reply.code(204).send();
      },
    );
  };
}
