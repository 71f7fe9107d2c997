import { z } from "zod";

/**
 * Names in the conversation hub, in a module of their own: agents' settings take a list of
 * session names too (agents.ts), and conversations.ts reaches agents.ts through jobs.ts.
 */

const NAME_RULE = "use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit";

/** A conversation session's name ("review", "build-42"). */
export const HubSessionNameSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, NAME_RULE);

/** An agent's name within a session: a registered client's own name, or a Corral agent's name. */
export const HubAgentNameSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, NAME_RULE);
