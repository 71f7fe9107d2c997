import type { ConfigFileStatus } from "@corral/shared";
import { apiFetch } from "./client.js";

export const configFileApi = {
  status: (signal?: AbortSignal) => apiFetch<ConfigFileStatus>("/api/config", { signal }),
  /** Served as an attachment: a link downloads it with the session cookie. */
  exportUrl: "/api/config/export",
};
