import { useQuery } from "@tanstack/react-query";
import { connectApi } from "../api/connect.js";
import { queryKeys } from "../lib/transport/query-keys.js";

export function useConnectInfo() {
  return useQuery({ queryKey: queryKeys.connect, queryFn: ({ signal }) => connectApi.info(signal), staleTime: 60_000 });
}
