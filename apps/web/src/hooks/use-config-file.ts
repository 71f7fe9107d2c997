import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import { configFileApi } from "../api/config-file.js";
import { queryKeys } from "../lib/transport/query-keys.js";
import { useLiveStatus } from "./use-live-status.js";

/** Read again this often only while the WebSocket is down; while it is up, the server sends each change as the file is read. */
const POLL_MS = 5000;

/** The config file's state; when it is read again, the agents it declares are fetched again too. */
export function useConfigFile() {
  const client = useQueryClient();
  const live = useLiveStatus();
  const query = useQuery({
    queryKey: queryKeys.configFile,
    queryFn: ({ signal }) => configFileApi.status(signal),
    refetchInterval: live ? false : POLL_MS,
  });
  // A load, a refusal or the file's removal: each may change the agents it declares (a removed file's go).
  const read = query.data ? `${query.data.state} ${query.data.loadedAt}` : null;
  useEffect(() => {
    if (read !== null) void client.invalidateQueries({ queryKey: queryKeys.agents.all });
  }, [read, client]);
  return query;
}
