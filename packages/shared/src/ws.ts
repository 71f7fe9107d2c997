import { z } from "zod";
import { ConfigFileStatusSchema } from "./config-file.js";
import { HubAgentSchema, HubMessageSchema, HubSessionNameSchema } from "./conversations.js";
import { OutputStreamSchema } from "./enums.js";
import { JobIdSchema, JobSchema, UsageSchema } from "./jobs.js";

/** What a job did to one path of its workdir, relative to the workdir as it was before the job. */
export const FileChangeSchema = z.enum(["created", "modified", "deleted"]);
export type FileChange = z.infer<typeof FileChangeSchema>;

export const JobFileSchema = z.object({
  /** Relative to the job's workdir, `/`-separated. */
  path: z.string(),
  change: FileChangeSchema,
  /** Size in bytes after the change; null when deleted. */
  size: z.number().int().nullable(),
  /** When the change was seen (ms since epoch). */
  at: z.number(),
});
export type JobFile = z.infer<typeof JobFileSchema>;

export const JobFilesSchema = z.object({
  files: z.array(JobFileSchema),
  /** Set when more files changed than a job's list holds: the list stops at this many, and the job was no longer watched. */
  cutAt: z.number().int().nullable(),
});
export type JobFiles = z.infer<typeof JobFilesSchema>;

/** Counts of a job's files by change, for one-line summaries. */
export const JobFileCountsSchema = z.object({ created: z.number().int(), modified: z.number().int(), deleted: z.number().int() });
export type JobFileCounts = z.infer<typeof JobFileCountsSchema>;

// ---- client → server ----------------------------------------------------------------------

export const SubscribeJobsMessageSchema = z.object({ type: z.literal("subscribe_jobs") }).strict();

/**
 * Follow one job: replay its output from `cursor` (0 = the start; else a cursor this server
 * sent), then live. A client that reconnects with the last cursor it received loses nothing.
 */
export const SubscribeJobMessageSchema = z
  .object({
    type: z.literal("subscribe_job"),
    jobId: JobIdSchema,
    cursor: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0),
  })
  .strict();

export const UnsubscribeJobsMessageSchema = z.object({ type: z.literal("unsubscribe_jobs") }).strict();
export const UnsubscribeJobMessageSchema = z.object({ type: z.literal("unsubscribe_job"), jobId: JobIdSchema }).strict();

/** Follow a conversation session: its messages after `cursor` (0 = all), then live, and its agents as they come and go. */
export const SubscribeConversationMessageSchema = z
  .object({
    type: z.literal("subscribe_conversation"),
    session: HubSessionNameSchema,
    cursor: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0),
  })
  .strict();
export const UnsubscribeConversationMessageSchema = z.object({ type: z.literal("unsubscribe_conversation"), session: HubSessionNameSchema }).strict();

/** Follow the config file's state: sent at once, then each time the file is read again. */
export const SubscribeConfigFileMessageSchema = z.object({ type: z.literal("subscribe_config_file") }).strict();
export const UnsubscribeConfigFileMessageSchema = z.object({ type: z.literal("unsubscribe_config_file") }).strict();

export const ClientMessageSchema = z.discriminatedUnion("type", [
  SubscribeJobsMessageSchema,
  SubscribeJobMessageSchema,
  UnsubscribeJobsMessageSchema,
  UnsubscribeJobMessageSchema,
  SubscribeConversationMessageSchema,
  UnsubscribeConversationMessageSchema,
  SubscribeConfigFileMessageSchema,
  UnsubscribeConfigFileMessageSchema,
]);
export type ClientMessage = z.infer<typeof ClientMessageSchema>;

// ---- server → client ----------------------------------------------------------------------

/** A subscription is in place (the job list; a job stream says `caught_up` instead). */
export const SubscribedMessageSchema = z.object({ type: z.literal("subscribed"), topic: z.literal("jobs") });

/** Job list: a job was created or changed. */
export const JobMessageSchema = z.object({ type: z.literal("job"), job: JobSchema });

/**
 * A piece of a job's output; `cursor` is where to resume after it. On the wire it is not one
 * JSON object like the others: see parseServerMessage.
 */
export const OutputMessageSchema = z.object({
  type: z.literal("output"),
  jobId: z.string(),
  stream: OutputStreamSchema,
  text: z.string(),
  cursor: z.number().int(),
});

/** The first line of an `output` message on the wire: the message without its text. */
export const OutputHeadSchema = OutputMessageSchema.omit({ text: true });
export type OutputHead = z.infer<typeof OutputHeadSchema>;

/** A file the job created, modified or deleted (the latest state of that path). */
export const FileMessageSchema = z.object({ type: z.literal("file"), jobId: z.string(), file: JobFileSchema });

/** The files known so far, sent when a job stream is subscribed (in batches). */
export const FilesMessageSchema = z.object({ type: z.literal("files"), jobId: z.string(), files: z.array(JobFileSchema) });

/** The job's state: sent at subscribe and whenever its status changes. */
export const StatusMessageSchema = z.object({ type: z.literal("status"), jobId: z.string(), job: JobSchema });

export const UsageMessageSchema = z.object({ type: z.literal("usage"), jobId: z.string(), usage: UsageSchema });

/** Replay reached the end of the log at `cursor`; what follows is live. Sent again after a catch-up. */
export const CaughtUpMessageSchema = z.object({ type: z.literal("caught_up"), jobId: z.string(), cursor: z.number().int() });

/** A conversation message (replayed after `subscribe_conversation`, then live). */
export const ConversationMessageSchema = z.object({ type: z.literal("conversation_message"), message: HubMessageSchema });

/** A conversation session's agents, sent at subscribe and whenever one registers, leaves or goes offline. */
export const ConversationAgentsSchema = z.object({
  type: z.literal("conversation_agents"),
  session: HubSessionNameSchema,
  agents: z.array(HubAgentSchema),
});

/** The config file's state (as GET /api/config answers): at subscribe, then whenever the file is read again. */
export const ConfigFileMessageSchema = z.object({ type: z.literal("config_file"), status: ConfigFileStatusSchema });

/** A message was refused (the connection stays open). `field` names the input at fault. */
export const ErrorMessageSchema = z.object({
  type: z.literal("error"),
  message: z.string(),
  field: z.string().optional(),
  jobId: z.string().optional(),
});

export const ServerMessageSchema = z.discriminatedUnion("type", [
  SubscribedMessageSchema,
  JobMessageSchema,
  OutputMessageSchema,
  FileMessageSchema,
  FilesMessageSchema,
  StatusMessageSchema,
  UsageMessageSchema,
  CaughtUpMessageSchema,
  ConversationMessageSchema,
  ConversationAgentsSchema,
  ConfigFileMessageSchema,
  ErrorMessageSchema,
]);
export type ServerMessage = z.infer<typeof ServerMessageSchema>;

/** The head line of an `output` message; its text follows as is. */
export const outputHead = (head: Omit<OutputHead, "type">): string => `${JSON.stringify({ type: "output", ...head })}\n`;

/**
 * A server message from the text of one WebSocket message. Each is one JSON object, except
 * `output`: a JSON head line (the message without `text`), then the text as is, so a stream of
 * any size is neither escaped by the server nor unescaped by the client. JSON never holds a raw
 * newline, so the first one ends the head. Throws on anything else.
 */
export function parseServerMessage(data: string): ServerMessage {
  const nl = data.indexOf("\n");
  if (nl < 0) return ServerMessageSchema.parse(JSON.parse(data));
  return { ...OutputHeadSchema.parse(JSON.parse(data.slice(0, nl))), text: data.slice(nl + 1) };
}

// ---- connection stats (GET /api/ws/stats) ------------------------------------------------

export const WsConnectionStatsSchema = z.object({
  id: z.number().int(),
  jobList: z.boolean(),
  streams: z.array(z.string()),
  /** Bytes handed to the socket that it has not written out yet. */
  bufferedBytes: z.number().int(),
  peakBufferedBytes: z.number().int(),
  catchUps: z.number().int(),
});
export type WsConnectionStats = z.infer<typeof WsConnectionStatsSchema>;

export const WsStatsSchema = z.object({
  /** Bytes a connection may queue before its streams switch to catching up. */
  sendBufferCap: z.number().int(),
  /** Connections accepted at once (CORRAL_WS_MAX_CONNECTIONS). */
  maxConnections: z.number().int(),
  /** Bytes queued over all connections: at most about maxConnections × sendBufferCap. */
  bufferedBytes: z.number().int(),
  /** Connections refused because the server was full, since it started. */
  refused: z.number().int(),
  connections: z.array(WsConnectionStatsSchema),
});
export type WsStats = z.infer<typeof WsStatsSchema>;
