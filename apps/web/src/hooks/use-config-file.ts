import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import { configFileApi } from "../api/config-file.js";
import { queryKeys } from "../lib/transport/query-keys.js";
import { useLiveStatus } from "./use-live-status.js";

/** Read again this often only while the WebSocket is down; while it is up, the server sends each change as the file is read. */
const POLL_MS = 5000;

/** The config file's state; when it loads again, the agents it declares are fetched again too. */
export function useConfigFile() {
  const client = useQueryClient();
  const live = useLiveStatus();
  const query = useQuery({
    queryKey: queryKeys.configFile,
    queryFn: ({ signal }) => configFileApi.status(signal),
    refetchInterval: live ? false : POLL_MS,
  });
  const loadedAt = query.data?.loadedAt;
  useEffect(() => {
    if (loadedAt != null) void client.invalidateQueries({ queryKey: queryKeys.agents.all });
  }, [loadedAt, client]);
  return query;
}
