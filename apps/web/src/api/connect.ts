import type { ConnectInfo } from "@corral/shared";
import { apiFetch } from "./client.js";

export const connectApi = {
  info: (signal?: AbortSignal) => apiFetch<ConnectInfo>("/api/connect", { signal }),
};
