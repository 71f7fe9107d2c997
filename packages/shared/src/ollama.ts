import { z } from "zod";
import { AgentNameSchema } from "./agents.js";

/** What a live probe saw when it asked a model for one small tool call. */
export const ProbeOutcomeSchema = z.enum([
  /** A real tool call came back in `message.tool_calls`. */
  "calls_tools",
  /** The model wrote the call as plain text: the template advertises tools the model does not use. */
  "text_tool_call",
  /** It answered in prose and called nothing. */
  "no_tool_call",
  /** Ollama refused the tools (400 "does not support tools"). */
  "no_tools_support",
  /** The probe could not run (server error, model not found, embedding model…). */
  "error",
]);
export type ProbeOutcome = z.infer<typeof ProbeOutcomeSchema>;

export const OllamaProbeSchema = z.object({
  outcome: ProbeOutcomeSchema,
  /** What came back, shortened: the call, the text, or the error. */
  detail: z.string(),
  /** Epoch ms of the probe. */
  checkedAt: z.number(),
});
export type OllamaProbe = z.infer<typeof OllamaProbeSchema>;

export const OllamaModelSchema = z.object({
  name: z.string(),
  /** From /api/show; the list endpoint's own capabilities are missing on many versions. */
  capabilities: z.array(z.string()),
  /** The template mentions tools; only a probe shows whether the model really calls them. */
  tools: z.boolean(),
  contextLength: z.number().int().nullable(),
  sizeBytes: z.number().nullable(),
  family: z.string().nullable(),
  parameterSize: z.string().nullable(),
  quantization: z.string().nullable(),
  /** Served by a remote host (Ollama cloud): not free, and the prompt leaves this machine. */
  cloud: z.boolean(),
  remoteHost: z.string().nullable(),
  /** Loaded in memory now (/api/ps), and how much of it sits in VRAM. */
  loaded: z.boolean(),
  sizeVramBytes: z.number().nullable(),
  /** Epoch ms when these facts were read from the server. */
  checkedAt: z.number(),
  /** The last live probe, kept across restarts. */
  probe: OllamaProbeSchema.nullable(),
});
export type OllamaModel = z.infer<typeof OllamaModelSchema>;

export const OllamaModelListSchema = z.object({
  /** The server asked. */
  url: z.string(),
  version: z.string().nullable(),
  models: z.array(OllamaModelSchema),
});
export type OllamaModelList = z.infer<typeof OllamaModelListSchema>;

/**
 * The models of the server's last successful listing, kept for when it does not answer: `seenAt`
 * is when that listing was read (null: never listed). None counts as loaded.
 */
export const OllamaLastKnownSchema = z.object({
  url: z.string(),
  seenAt: z.number().nullable(),
  models: z.array(OllamaModelSchema),
});
export type OllamaLastKnown = z.infer<typeof OllamaLastKnownSchema>;

/** Which server: that of an Ollama agent (its baseUrl, else CORRAL_OLLAMA_URL). */
export const OllamaServerQuerySchema = z.object({ agent: AgentNameSchema.optional() }).strict();
export type OllamaServerQuery = z.infer<typeof OllamaServerQuerySchema>;

export const OllamaProbeBodySchema = z
  .object({
    model: z.string().min(1).max(200),
    agent: AgentNameSchema.optional(),
  })
  .strict();
export type OllamaProbeBody = z.infer<typeof OllamaProbeBodySchema>;

/** A probe's outcome, with the model and the server it asked. */
export const OllamaProbeResultSchema = OllamaProbeSchema.extend({ model: z.string(), url: z.string() });
export type OllamaProbeResult = z.infer<typeof OllamaProbeResultSchema>;
