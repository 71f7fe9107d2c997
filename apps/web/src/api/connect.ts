import type { ConnectInfo } from "@corral/shared";
import { useQuery } from "@tanstack/react-query";
import { queryKeys } from "../lib/query-keys.js";
import { apiFetch } from "./client.js";

export function useConnectInfo() {
  return useQuery({ queryKey: queryKeys.connect, queryFn: ({ signal }) => apiFetch<ConnectInfo>("/api/connect", { signal }), staleTime: 60_000 });
}
