import { useQuery } from "@tanstack/react-query";
import { queryKeys } from "../lib/transport/query-keys.js";

/** Whether the WebSocket is connected, kept in the query cache like all other shared state. */
export function useLiveStatus(): boolean {
  const { data } = useQuery<boolean>({
    queryKey: queryKeys.live,
    queryFn: () => false,
    initialData: false,
    staleTime: Infinity,
    enabled: false,
  });
  return data;
}
