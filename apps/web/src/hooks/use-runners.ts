import { useQuery } from "@tanstack/react-query";
import { runnersApi } from "../api/runners.js";
import { queryKeys } from "../lib/transport/query-keys.js";

/** Runners heartbeat every 2 s: the list is read again as often, so a silent one shows within a lease. */
export function useRunners() {
  return useQuery({ queryKey: queryKeys.runners, queryFn: ({ signal }) => runnersApi.list(signal), refetchInterval: 2000 });
}
