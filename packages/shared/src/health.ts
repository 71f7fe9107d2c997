import { z } from "zod";

/** `GET /api/health`: the server is up and ready. */
export const HealthSchema = z.object({ ok: z.literal(true) });
export type Health = z.infer<typeof HealthSchema>;
