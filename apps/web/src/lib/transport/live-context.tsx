import { useQueryClient } from "@tanstack/react-query";
import { createContext, useContext, useEffect, useState, type ReactNode } from "react";
import { LiveClient } from "./ws.js";

const LiveContext = createContext<LiveClient | null>(null);

export function LiveProvider({ children }: { children: ReactNode }) {
  const client = useQueryClient();
  const [live] = useState(() => new LiveClient(client));
  useEffect(() => {
    live.start();
    return () => live.stop();
  }, [live]);
  return <LiveContext.Provider value={live}>{children}</LiveContext.Provider>;
}

/** Keeps a job's stream flowing into the cache while the calling component is mounted. */
export function useFollowJob(jobId: string): void {
  const live = useContext(LiveContext);
  useEffect(() => (live ? live.follow(jobId) : undefined), [live, jobId]);
}

/** Keeps a conversation session's messages and agents flowing into the cache while the calling component is mounted. */
export function useFollowConversation(session: string | null): void {
  const live = useContext(LiveContext);
  useEffect(() => (live && session ? live.followConversation(session) : undefined), [live, session]);
}
