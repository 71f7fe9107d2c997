import { useQuery, useQueryClient } from "@tanstack/react-query";
import { conversationsApi } from "../api/conversations.js";
import { emptyTimeline, type Timeline } from "../lib/domain/conversation-timeline.js";
import { useFollowConversation } from "../lib/transport/live-context.js";
import { queryKeys } from "../lib/transport/query-keys.js";

/** Sessions appear when an agent registers anywhere: the list is read again every few seconds. */
export function useConversationSessions() {
  return useQuery({
    queryKey: queryKeys.conversations.sessions(),
    queryFn: ({ signal }) => conversationsApi.sessions(signal),
    refetchInterval: 5000,
  });
}

/**
 * One session as the WebSocket keeps it: its agents (read once over REST, then kept by the
 * socket) and its messages, which only the socket writes (replayed from the start, then live).
 */
export function useConversation(session: string | null) {
  useFollowConversation(session);
  const client = useQueryClient();
  const name = session ?? "";
  const agents = useQuery({
    queryKey: queryKeys.conversations.agents(name),
    queryFn: ({ signal }) => conversationsApi.agents(name, signal),
    enabled: session !== null,
  });
  const timeline = useQuery({
    queryKey: queryKeys.conversations.messages(name),
    queryFn: () => client.getQueryData<Timeline>(queryKeys.conversations.messages(name)) ?? emptyTimeline(),
    enabled: session !== null,
    staleTime: Number.POSITIVE_INFINITY,
  });
  return { agents, timeline };
}
