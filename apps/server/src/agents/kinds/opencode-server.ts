import { createOpencodeServerAdapter, opencodeServerAvailability, pinnedSession } from "../opencode-server/adapter.js";
import type { InProcessAgentKind } from "../types.js";
import { agentFields, serverUrl } from "./fields.js";
import { readEvent } from "./opencode.js";

/**
 * An OpenCode server the user already runs (`opencode serve`, the agent's baseUrl): a job posts
 * its prompt into a session there over OpenCode's HTTP API and follows the answer on its event
 * stream. The answer's parts are written as `opencode run --format json` prints them, so they read
 * as the CLI kind's do. None is built in: the server's address is the user's.
 */
export const opencodeServer: InProcessAgentKind = {
  kind: "opencode_server",
  provider: "opencode",
  builtins: [],
  fields: agentFields({ connection: [serverUrl("OpenCode server URL", "the address opencode serve prints")] }),
  // Trying again would post the message into the user's session a second time.
  retries: false,
  readEvent,
  resumes: true,
  pinnedConversation: pinnedSession,
  inProcess: { adapter: createOpencodeServerAdapter, availability: opencodeServerAvailability },
};
