import { z } from "zod";

/** A signed-in browser, as the Connect page lists it (never its secret). */
export const BrowserSessionSchema = z.object({
  id: z.string(),
  userAgent: z.string(),
  createdAt: z.number().int(),
  lastSeenAt: z.number().int(),
  expiresAt: z.number().int(),
  /** The session of the browser asking. */
  current: z.boolean(),
});
export type BrowserSession = z.infer<typeof BrowserSessionSchema>;

export const BrowserSessionListSchema = z.object({ sessions: z.array(BrowserSessionSchema) });
export type BrowserSessionList = z.infer<typeof BrowserSessionListSchema>;

export const SessionsRevokedSchema = z.object({ revoked: z.number().int() });
export type SessionsRevoked = z.infer<typeof SessionsRevokedSchema>;

export const SessionIdSchema = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "a session id from GET /api/sessions");
