import { z } from "zod";
import { JobOriginSchema } from "./enums.js";
import { JobIdSchema } from "./jobs.js";

export const AuditActionSchema = z.enum(["launch", "cancel", "merge", "discard"]);
export type AuditAction = z.infer<typeof AuditActionSchema>;

/** One line of the audit trail: who launched, cancelled, merged or discarded which job, and through what. */
export const AuditEntrySchema = z.object({
  id: z.number().int(),
  at: z.number(),
  action: AuditActionSchema,
  jobId: z.string(),
  agent: z.string(),
  /** The door: the panel, MCP or REST. */
  door: JobOriginSchema,
  /** MCP clientInfo `name/version`, or the REST caller's `x-corral-client` or `user-agent`. */
  client: z.string().nullable(),
});
export type AuditEntry = z.infer<typeof AuditEntrySchema>;

export const AuditListQuerySchema = z
  .object({
    jobId: JobIdSchema.optional(),
    limit: z.coerce.number().int().min(1).max(1000).default(100),
    offset: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0),
  })
  .strict();
export type AuditListQuery = z.infer<typeof AuditListQuerySchema>;

export const AuditListSchema = z.object({ entries: z.array(AuditEntrySchema), total: z.number().int() });
export type AuditList = z.infer<typeof AuditListSchema>;
