import { z } from "zod";
import { HubAgentNameSchema, HubSessionNameSchema } from "./hub-names.js";
import { JobIdSchema } from "./jobs.js";

/**
 * Conversations between agents: MCP clients register under a session name and a name of their
 * own, then send each other messages; Corral's worker agents answer in the same session. Sessions
 * isolate: nothing of one session is visible from another.
 */

export { HubAgentNameSchema, HubSessionNameSchema };

export const HubMessageTextSchema = z.string().min(1, "the message is empty").max(1_000_000);

/** `client`: an MCP (or REST) client that registered; `worker`: one of Corral's agents, answering through jobs. */
export const HubAgentKindSchema = z.enum(["client", "worker"]);
export type HubAgentKind = z.infer<typeof HubAgentKindSchema>;

export const HubAgentSchema = z.object({
  session: HubSessionNameSchema,
  name: HubAgentNameSchema,
  kind: HubAgentKindSchema,
  label: z.string().nullable(),
  /** A client is reachable while its registration lives; a worker while its agent is enabled and available (and, pinned to one conversation of its worker, limited to this one session). */
  online: z.boolean(),
  /** When a client registered (null for workers). */
  registeredAt: z.number().nullable(),
  /** The last time the agent was heard from (a call, a message); null when never. */
  lastSeenAt: z.number().nullable(),
  /** A client's live target: the address of its own server a message to it is posted into (never its password); null: messages wait in its inbox. */
  liveAt: z.string().nullable(),
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

/** OpenCode's session ids: `ses_`, 12 hex digits of time, 14 base-62 characters (its Identifier module). */
export const OPENCODE_SESSION_ID = /^ses_[0-9a-f]{12}[0-9A-Za-z]{14}$/;

const noControl = (value: string) => !/[\u0000-\u001f\u007f]/.test(value);

/**
 * A registrant's own server, which Corral posts each message to it into (its live target): an
 * OpenCode server (`opencode serve`, or the TUI's `--port`). `port` alone is http://127.0.0.1:<port>.
 * Only this machine's addresses are taken (conversations/live-target.ts says why).
 */
export const HubServerSchema = z
  .object({
    url: z
      .string()
      .min(1)
      .max(2048)
      .refine(noControl, "a URL cannot contain control characters")
      .optional()
      .describe("http://127.0.0.1:<port> as opencode serve prints it"),
    port: z.number().int().min(1).max(65535).optional().describe("Its port on this machine, instead of url"),
    session: z
      .string()
      .regex(OPENCODE_SESSION_ID, "not an OpenCode session id (ses_…); leave it out to use the server's latest session")
      .optional()
      .describe("The OpenCode session (ses_…) to post into; default: its latest"),
    password: z
      .string()
      .min(1)
      .max(1024)
      .refine(noControl, "the password cannot contain control characters")
      .optional()
      .describe("Its OPENCODE_SERVER_PASSWORD, if set"),
  })
  .strict()
  .refine((s) => (s.url === undefined) !== (s.port === undefined), { message: "give the server's url or its port, one of them", path: ["port"] });
export type HubServer = z.infer<typeof HubServerSchema>;

// ---- MCP tool inputs ---------------------------------------------------------------------

const handleArg = HubHandleSchema.describe("From corral_register");

export const HubRegisterInputSchema = z.object({
  name: HubAgentNameSchema.describe("Your name there"),
  session: HubSessionNameSchema.describe("The hub session to join"),
  label: z.string().max(200).optional().describe("Your role, as others see it"),
  handle: HubHandleSchema.optional().describe("Yours, to replace that registration"),
  server: HubServerSchema.optional().describe("Your own server (OpenCode): messages to you are posted into its session live"),
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
export const HubRegisterBodySchema = z
  .object({
    name: HubRegisterInputSchema.shape.name,
    label: HubRegisterInputSchema.shape.label,
    /** The key of a registration of yours, which this one replaces (registering again from a new port). */
    key: HubHandleSchema.optional(),
    server: HubRegisterInputSchema.shape.server,
  })
  .strict();
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
