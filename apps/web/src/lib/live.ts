import { useQuery } from "@tanstack/react-query";

/** Whether the WebSocket is connected, kept in the query cache like all other shared state. */
export const liveKey = ["live"] as const;

export function useLiveStatus(): boolean {
  const { data } = useQuery<boolean>({
    queryKey: liveKey,
    queryFn: () => false,
    initialData: false,
    staleTime: Infinity,
    enabled: false,
  });
  return data;
}
