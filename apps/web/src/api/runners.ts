import type { RunnerList } from "@corral/shared";
import { apiFetch } from "./client.js";

export const runnersApi = {
  list: (signal?: AbortSignal) => apiFetch<RunnerList>("/api/runners", { signal }).then((r) => r.runners),
};
