import type { OpenApiDocument } from "../lib/domain/openapi.js";
import { apiFetch } from "./client.js";

export const openapiApi = {
  document: (signal?: AbortSignal) => apiFetch<OpenApiDocument>("/api/openapi.json", { signal }),
};
