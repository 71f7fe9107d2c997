import { z } from "zod";
import { AgentNameSchema } from "./agents.js";

/** Where in the config file a refusal points: 1-based line and column, and the field's path (`agents.reviewer.tools.1`). */
export const ConfigFileErrorSchema = z.object({
  message: z.string(),
  field: z.string().nullable(),
  line: z.number().int().nullable(),
  column: z.number().int().nullable(),
});
export type ConfigFileError = z.infer<typeof ConfigFileErrorSchema>;

/**
 * The config file (`CORRAL_CONFIG`) as last read: `absent` (no file, nothing declared), `loaded`, or
 * `error` (the file was refused; the agents of the last good load are kept).
 */
export const ConfigFileStatusSchema = z.object({
  path: z.string(),
  state: z.enum(["absent", "loaded", "error"]),
  /** The agents the file declares (as of its last good load). */
  agents: z.array(AgentNameSchema),
  /** When the file was last read without error. */
  loadedAt: z.number().nullable(),
  /** Everything wrong with the file, in one report (state `error`); empty otherwise. */
  errors: z.array(ConfigFileErrorSchema),
  /** Where Corral looks, when it found no file there but one a user may have meant (`./config.yaml`); else null. */
  hint: z.string().nullable(),
});
export type ConfigFileStatus = z.infer<typeof ConfigFileStatusSchema>;
