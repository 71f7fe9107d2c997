import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { sessionsApi } from "../api/sessions.js";
import { queryKeys } from "../lib/transport/query-keys.js";

export function useSessions() {
  return useQuery({ queryKey: queryKeys.sessions, queryFn: ({ signal }) => sessionsApi.list(signal) });
}

/** Signing out: another browser drops from the list; this browser's own session takes the panel with it. */
export function useSessionMutations() {
  const client = useQueryClient();
  const done = () => void client.invalidateQueries();
  return {
    signOut: useMutation({ mutationFn: (id: string) => sessionsApi.signOut(id), onSuccess: done }),
    signOutEverywhere: useMutation({ mutationFn: () => sessionsApi.signOutEverywhere(), onSuccess: done }),
  };
}
