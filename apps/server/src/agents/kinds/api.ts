import { apiAvailability } from "../api/availability.js";
import { DEFAULT_MAX_STEPS } from "../api/step-limit.js";
import type { InProcessAdapter, InProcessAgentKind } from "../types.js";
import { agentFields, allowedHosts, apiKeyVariable, modelApi, role, serverUrl, stepLimit, tools } from "./fields.js";

/**
 * The AI SDK and its providers are a third of the server's code: they load with the first API
 * job, not with every start (cold start and idle memory, issue 13; test/bundle.test.ts).
 */
const lazyApiAdapter: InProcessAgentKind["inProcess"]["adapter"] = (config, conversations) => {
  let adapter: Promise<InProcessAdapter> | undefined;
  return {
    // bash runs in the sandbox.
    sandboxesCommands: true,
    async run(spec, io) {
      adapter ??= import("../api/api.js").then(({ createApiAdapter }) => createApiAdapter(config, conversations));
      return (await adapter).run(spec, io);
    },
  };
};

/**
 * Models behind an API (OpenAI and every OpenAI-compatible server, Anthropic, Google), run by
 * the AI SDK's tool loop inside Corral with the tools the agent is given. None is built in: each
 * needs its API, model and key variable. The loop prints plain text, shown as printed.
 */
export const api: InProcessAgentKind = {
  kind: "api",
  // The price table's provider is the API the agent talks to (see providerFor).
  provider: "openai",
  providerFor: (fields) => fields.api ?? undefined,
  builtins: [],
  fields: agentFields({
    connection: [modelApi("api"), serverUrl("Base URL", "empty: the API's own; e.g. http://localhost:1234/v1"), apiKeyVariable],
    limits: [stepLimit(DEFAULT_MAX_STEPS)],
    wide: [role, tools, allowedHosts],
  }),
  adding: {
    title: "Add an API agent",
    intro:
      "A model behind an API (OpenAI or any compatible server, Anthropic, Google) works in the job's workdir with the tools you give it. Its key stays in an environment variable: only the variable's name is stored.",
    primary: false,
    presets: [],
  },
  retries: false,
  // The loop keeps each job's messages in the registry; a follow-up sends them again.
  resumes: true,
  inProcess: { adapter: lazyApiAdapter, availability: apiAvailability },
};
