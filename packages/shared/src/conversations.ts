import { z } from "zod";
import { JobIdSchema } from "./jobs.js";

/**
 * Conversations between agents: MCP clients register under a session name and a name of their
 * own, then send each other messages; Corral's worker agents answer in the same session. Sessions
 * isolate: nothing of one session is visible from another.
 */

const NAME_RULE = "use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit";

/** A conversation session's name ("review", "build-42"). */
export const HubSessionNameSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, NAME_RULE);

/** An agent's name within a session: a registered client's own name, or a Corral agent's name. */
export const HubAgentNameSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, NAME_RULE);

export const HubMessageTextSchema = z.string().min(1, "the message is empty").max(1_000_000);

/** `client`: an MCP (or REST) client that registered; `worker`: one of Corral's agents, answering through jobs. */
export const HubAgentKindSchema = z.enum(["client", "worker"]);
export type HubAgentKind = z.infer<typeof HubAgentKindSchema>;

export const HubAgentSchema = z.object({
  session: HubSessionNameSchema,
  name: HubAgentNameSchema,
  kind: HubAgentKindSchema,
  label: z.string().nullable(),
  /** A client is reachable while its registration lives; a worker while its agent is enabled and available. */
  online: z.boolean(),
  /** When a client registered (null for workers). */
  registeredAt: z.number().nullable(),
  /** The last time the agent was heard from (a call, a message); null when never. */
  lastSeenAt: z.number().nullable(),
});
export type HubAgent = z.infer<typeof HubAgentSchema>;

export const HubMessageSchema = z.object({
  /** Monotonic over the whole server: the cursor to read after. */
  id: z.number().int(),
  session: HubSessionNameSchema,
  from: HubAgentNameSchema,
  to: HubAgentNameSchema,
  text: z.string(),
  /** The job a worker ran for this message (sent to a worker), or that produced it (a worker's answer). */
  jobId: JobIdSchema.nullable(),
  at: z.number(),
});
export type HubMessage = z.infer<typeof HubMessageSchema>;

export const HubSessionSummarySchema = z.object({
  name: HubSessionNameSchema,
  /** Registered clients, online or not. */
  agents: z.number().int(),
  online: z.number().int(),
  messages: z.number().int(),
  lastMessageAt: z.number().nullable(),
});
export type HubSessionSummary = z.infer<typeof HubSessionSummarySchema>;

// ---- REST --------------------------------------------------------------------------------

/** `GET /api/conversations` */
export const HubSessionListSchema = z.object({ sessions: z.array(HubSessionSummarySchema) });
export type HubSessionList = z.infer<typeof HubSessionListSchema>;

/** `GET /api/conversations/:session/agents`: registered clients, then Corral's worker agents. */
export const HubAgentListSchema = z.object({ agents: z.array(HubAgentSchema) });
export type HubAgentList = z.infer<typeof HubAgentListSchema>;

const cursorFromQuery = z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/** `GET /api/conversations/:session/messages`: the session's messages after `cursor`, oldest first; `agent` keeps those from or to it. */
export const HubMessagesQuerySchema = z
  .object({
    agent: HubAgentNameSchema.optional(),
    cursor: cursorFromQuery.default(0),
    limit: z.coerce.number().int().min(1).max(1000).default(200),
  })
  .strict();
export type HubMessagesQuery = z.infer<typeof HubMessagesQuerySchema>;

/** A page of messages; `cursor` is where the next read starts (the last message's id, or the cursor given). */
export const HubMessagePageSchema = z.object({ messages: z.array(HubMessageSchema), cursor: z.number().int() });
export type HubMessagePage = z.infer<typeof HubMessagePageSchema>;

/** What a registered agent's calls carry: the secret its registration answered (MCP `handle`, REST `key`). */
export const HubHandleSchema = z.string().regex(/^[A-Za-z0-9_-]{20,64}$/, "not a registration handle; register first and pass the handle it answers");

// ---- MCP tool inputs ---------------------------------------------------------------------

const handleArg = HubHandleSchema.describe("From corral_register");

export const HubRegisterInputSchema = z.object({
  name: HubAgentNameSchema.describe("Your name there"),
  session: HubSessionNameSchema.describe("The hub session to join"),
  label: z.string().max(200).optional().describe("Your role, as others see it"),
  handle: HubHandleSchema.optional().describe("Yours, to replace that registration"),
  push: z.boolean().optional().describe("Claude Code started with this server as a channel: messages come as <channel> events, no corral_receive"),
});

export const HubAgentsInputSchema = z.object({ session: HubSessionNameSchema.describe("The session to list") });

export const HubSendInputSchema = z.object({
  handle: handleArg,
  to: HubAgentNameSchema.describe("A registered agent, or one of Corral's"),
  text: HubMessageTextSchema,
});

export const HubReceiveInputSchema = z.object({
  handle: handleArg,
  timeout_s: z.number().int().min(0).max(3600).optional().describe("Default 60; 0: no wait"),
});

export const HubReadInputSchema = z.object({
  handle: handleArg,
  agent: HubAgentNameSchema.describe("Whose history"),
  cursor: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional().describe("From a previous read (default: the start)"),
});

// ---- REST clients that take part ---------------------------------------------------------

/** `POST /api/conversations/:session/agents`: join the session as a REST client. */
export const HubRegisterBodySchema = z.object({ name: HubRegisterInputSchema.shape.name, label: HubRegisterInputSchema.shape.label }).strict();
export type HubRegisterBody = z.infer<typeof HubRegisterBodySchema>;

/** The registration: `key` goes in the body of the agent's later calls. */
export const HubRegistrationSchema = z.object({ agent: HubAgentSchema, key: HubHandleSchema });
export type HubRegistration = z.infer<typeof HubRegistrationSchema>;

/** `POST /api/conversations/:session/messages`: send as the registered agent. */
export const HubSendBodySchema = z.object({ key: HubHandleSchema, to: HubSendInputSchema.shape.to, text: HubSendInputSchema.shape.text }).strict();
export type HubSendBody = z.infer<typeof HubSendBodySchema>;

/** `POST /api/conversations/:session/receive`: take what waits, else wait up to `timeoutS` for a message. */
export const HubReceiveBodySchema = z.object({ key: HubHandleSchema, timeoutS: z.number().int().min(0).max(3600).default(60) }).strict();
export type HubReceiveBody = z.infer<typeof HubReceiveBodySchema>;

/** What a receive took from the inbox, oldest first; empty when the wait timed out. */
export const HubReceivedSchema = z.object({ messages: z.array(HubMessageSchema) });
export type HubReceived = z.infer<typeof HubReceivedSchema>;

/** `POST /api/conversations/:session/leave`: the registration ends. */
export const HubLeaveBodySchema = z.object({ key: HubHandleSchema }).strict();
export type HubLeaveBody = z.infer<typeof HubLeaveBodySchema>;
