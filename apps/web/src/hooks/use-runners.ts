import { useQuery } from "@tanstack/react-query";
import { runnersApi } from "../api/runners.js";
import { queryKeys } from "../lib/transport/query-keys.js";

/** Runners heartbeat every 2 s: the list is read again as often, so a silent one shows within a lease. */
export function useRunners() {
  return useQuery({ queryKey: queryKeys.runners, queryFn: ({ signal }) => runnersApi.list(signal), refetchInterval: 2000 });
}

/** The name of runner `id` (what its machine announced, as the Runners page shows it), or its id until the list is read. */
export function useRunnerName(id: string | null): string | null {
  const runners = useQuery({
    queryKey: queryKeys.runners,
    queryFn: ({ signal }) => runnersApi.list(signal),
    enabled: id !== null,
    staleTime: 30_000,
  });
  if (id === null) return null;
  return runners.data?.find((r) => r.id === id)?.name ?? id;
}

/** Whether this server can have runners (its registry is in PostgreSQL); undefined until read. One machine's panel never mentions them. */
export function useMultiMachine(): boolean | undefined {
  const directory = useQuery({
    queryKey: [...queryKeys.runners, "directory"],
    queryFn: ({ signal }) => runnersApi.directory(signal),
    staleTime: 60_000,
  });
  return directory.data?.multiMachine;
}
