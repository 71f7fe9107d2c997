import type { RunnerList } from "@corral/shared";
import { apiFetch } from "./client.js";

export const runnersApi = {
  list: (signal?: AbortSignal) => apiFetch<RunnerList>("/api/runners", { signal }).then((r) => r.runners),
  /** The list and whether runners can join at all (the registry in PostgreSQL). */
  directory: (signal?: AbortSignal) => apiFetch<RunnerList>("/api/runners", { signal }),
};
