import { useQuery } from "@tanstack/react-query";
import { openapiApi } from "../api/openapi.js";
import { queryKeys } from "../lib/transport/query-keys.js";

/** The server's OpenAPI document; it changes only when the server does. */
export function useOpenApiDocument() {
  return useQuery({ queryKey: queryKeys.openapi, queryFn: ({ signal }) => openapiApi.document(signal), staleTime: Number.POSITIVE_INFINITY });
}
