import { useQuery } from "@tanstack/react-query";
import type { OpenApiDocument } from "../lib/openapi.js";
import { queryKeys } from "../lib/query-keys.js";
import { apiFetch } from "./client.js";

/** The server's OpenAPI document; it changes only when the server does. */
export function useOpenApiDocument() {
  return useQuery({
    queryKey: queryKeys.openapi,
    queryFn: ({ signal }) => apiFetch<OpenApiDocument>("/api/openapi.json", { signal }),
    staleTime: Number.POSITIVE_INFINITY,
  });
}
