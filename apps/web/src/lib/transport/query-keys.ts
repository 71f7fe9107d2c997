import type { JobFilters } from "../../api/jobs.js";

/** Every cache key the panel uses; the WebSocket client writes into the same keys. */
export const queryKeys = {
  jobs: {
    all: ["jobs"] as const,
    lists: () => [...queryKeys.jobs.all, "list"] as const,
    list: (filters: JobFilters, page: { limit: number; offset: number }) => [...queryKeys.jobs.lists(), filters, page] as const,
    active: () => [...queryKeys.jobs.all, "active"] as const,
    detail: (id: string) => [...queryKeys.jobs.all, "detail", id] as const,
    tail: (id: string) => [...queryKeys.jobs.detail(id), "tail"] as const,
    output: (id: string) => [...queryKeys.jobs.all, "output", id] as const,
    readable: (id: string) => [...queryKeys.jobs.all, "readable", id] as const,
    files: (id: string) => [...queryKeys.jobs.all, "files", id] as const,
    thread: (id: string) => [...queryKeys.jobs.all, "thread", id] as const,
    group: (id: string) => [...queryKeys.jobs.all, "group", id] as const,
    relaunches: (id: string) => [...queryKeys.jobs.all, "relaunches", id] as const,
    attempts: (id: string) => [...queryKeys.jobs.all, "attempts", id] as const,
    changes: (id: string) => [...queryKeys.jobs.all, "changes", id] as const,
  },
  agents: {
    all: ["agents"] as const,
  },
  /** The agent kinds and their forms' fields: the server's, fixed while it runs. */
  agentKinds: ["agent-kinds"] as const,
  connect: ["connect"] as const,
  /** The config file's state (CORRAL_CONFIG). */
  configFile: ["config-file"] as const,
  /** The OpenAPI document, for the API reference page. */
  openapi: ["openapi"] as const,
  /** Signed-in browsers (Connect page). */
  sessions: ["sessions"] as const,
  /** `corral runner` processes (Runners page). */
  runners: ["runners"] as const,
  conversations: {
    all: ["conversations"] as const,
    sessions: () => [...queryKeys.conversations.all, "sessions"] as const,
    agents: (session: string) => [...queryKeys.conversations.all, "agents", session] as const,
    /** A session's timeline, written by the WebSocket client only (lib/domain/conversation-timeline.ts). */
    messages: (session: string) => [...queryKeys.conversations.all, "messages", session] as const,
  },
  /** Whether the WebSocket is connected; written by lib/ws.ts, read by useLiveStatus. */
  live: ["live"] as const,
  files: {
    all: ["files"] as const,
    roots: () => [...queryKeys.files.all, "roots"] as const,
    dir: (path: string) => [...queryKeys.files.all, "dir", path] as const,
    file: (path: string) => [...queryKeys.files.all, "file", path] as const,
  },
  ollama: {
    all: ["ollama"] as const,
    models: (agent: string) => [...queryKeys.ollama.all, "models", agent] as const,
    lastKnown: (agent: string) => [...queryKeys.ollama.all, "last-known", agent] as const,
  },
  costs: {
    all: ["costs"] as const,
    summary: (range: { from: string; to: string }, groupBy: readonly string[]) =>
      [...queryKeys.costs.all, "summary", range, groupBy.join(",")] as const,
    budgets: () => [...queryKeys.costs.all, "budgets"] as const,
    prices: () => [...queryKeys.costs.all, "prices"] as const,
  },
};
