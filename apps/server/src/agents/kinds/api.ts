import { apiAvailability } from "../api/availability.js";
import type { InProcessAdapter, InProcessAgentKind } from "../types.js";

/**
 * The AI SDK and its providers are a third of the server's code: they load with the first API
 * job, not with every start (cold start and idle memory, issue 13; test/bundle.test.ts).
 */
const lazyApiAdapter: InProcessAgentKind["inProcess"]["adapter"] = (config, conversations) => {
  let adapter: Promise<InProcessAdapter> | undefined;
  return {
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
  invalid: ({ api: modelApi }) =>
    modelApi ? null : { field: "api", message: "an api agent needs its API: openai (or any OpenAI-compatible server), anthropic or google" },
  builtins: [],
  retries: false,
  // The loop keeps each job's messages in the registry; a follow-up sends them again.
  resumes: true,
  inProcess: { adapter: lazyApiAdapter, availability: apiAvailability },
};
